//! A BERT encoder's forward pass on the CPU: embeddings, then per layer self-attention and a
//! GELU feed-forward block, each with its residual and layer norm. Matrix products go through
//! `matrixmultiply`'s SGEMM, or for a few tokens (a query) a kernel that reads each weight
//! once; a sequence is run at its own length (no padding), so a batch is its sequences run
//! side by side on the rayon pool.

use crate::safetensors::{Table, Tensors};

/// What `config.json` says of the encoder.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Config {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub num_hidden_layers: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "eps")]
    pub layer_norm_eps: f32,
    #[serde(default = "gelu")]
    pub hidden_act: String,
    /// `xlm-roberta` (and RoBERTa's kin) count positions from the padding id plus one.
    #[serde(default)]
    pub model_type: String,
    #[serde(default)]
    pub pad_token_id: Option<usize>,
}

impl Config {
    /// The row of the position table the first token reads: RoBERTa's family number
    /// positions after the padding id (2 for XLM-RoBERTa), BERT from 0.
    pub fn first_position(&self) -> usize {
        match self.model_type.as_str() {
            "roberta" | "xlm-roberta" | "camembert" => self.pad_token_id.unwrap_or(1).saturating_add(1),
            _ => 0,
        }
    }

    /// How many tokens the position table has room for.
    pub fn positions(&self) -> usize {
        self.max_position_embeddings.saturating_sub(self.first_position())
    }
}

fn eps() -> f32 {
    1e-12
}

fn gelu() -> String {
    "gelu".into()
}

struct Layer {
    /// Query, key and value projections as one `[3h, h]` matrix.
    qkv_w: Vec<f32>,
    qkv_b: Vec<f32>,
    out_w: Vec<f32>,
    out_b: Vec<f32>,
    ln1: (Vec<f32>, Vec<f32>),
    inter_w: Vec<f32>,
    inter_b: Vec<f32>,
    down_w: Vec<f32>,
    down_b: Vec<f32>,
    ln2: (Vec<f32>, Vec<f32>),
}

pub struct Bert {
    cfg: Config,
    /// The word table, read a row per token (left in its file when large).
    word: Table,
    pos: Vec<f32>,
    token_type: Vec<f32>,
    ln: (Vec<f32>, Vec<f32>),
    layers: Vec<Layer>,
    vocab: usize,
}

impl Bert {
    pub fn load(cfg: Config, t: &Tensors) -> Result<Bert, String> {
        if !matches!(cfg.hidden_act.as_str(), "gelu" | "gelu_new" | "gelu_python") {
            return Err(format!("activation `{}` is not supported (gelu is)", cfg.hidden_act));
        }
        let h = cfg.hidden_size;
        if h == 0 || cfg.num_attention_heads == 0 || !h.is_multiple_of(cfg.num_attention_heads) {
            return Err("hidden_size is not a positive multiple of num_attention_heads".into());
        }
        if cfg.positions() < 3 {
            return Err(format!(
                "max_position_embeddings ({}) leaves no room for a text after the first position ({})",
                cfg.max_position_embeddings,
                cfg.first_position()
            ));
        }
        let get = |name: &str, want: &[usize]| -> Result<Vec<f32>, String> {
            let (shape, v) = t.get(name)?;
            if shape != want {
                return Err(format!("`{name}` is {shape:?}, not {want:?}"));
            }
            Ok(v)
        };
        let (word_shape, word) = t.table("embeddings.word_embeddings.weight")?;
        if word_shape.len() != 2 || word_shape[1] != h {
            return Err(format!("word embeddings are {word_shape:?}"));
        }
        let vocab = word_shape[0];
        if vocab == 0 {
            return Err("the word table is empty".into());
        }
        let mut layers = Vec::new();
        for i in 0..cfg.num_hidden_layers {
            let p = |n: &str| format!("encoder.layer.{i}.{n}");
            let mut qkv_w = get(&p("attention.self.query.weight"), &[h, h])?;
            qkv_w.extend(get(&p("attention.self.key.weight"), &[h, h])?);
            qkv_w.extend(get(&p("attention.self.value.weight"), &[h, h])?);
            let mut qkv_b = get(&p("attention.self.query.bias"), &[h])?;
            qkv_b.extend(get(&p("attention.self.key.bias"), &[h])?);
            qkv_b.extend(get(&p("attention.self.value.bias"), &[h])?);
            let f = cfg.intermediate_size;
            layers.push(Layer {
                qkv_w,
                qkv_b,
                out_w: get(&p("attention.output.dense.weight"), &[h, h])?,
                out_b: get(&p("attention.output.dense.bias"), &[h])?,
                ln1: (
                    get(&p("attention.output.LayerNorm.weight"), &[h])?,
                    get(&p("attention.output.LayerNorm.bias"), &[h])?,
                ),
                inter_w: get(&p("intermediate.dense.weight"), &[f, h])?,
                inter_b: get(&p("intermediate.dense.bias"), &[f])?,
                down_w: get(&p("output.dense.weight"), &[h, f])?,
                down_b: get(&p("output.dense.bias"), &[h])?,
                ln2: (
                    get(&p("output.LayerNorm.weight"), &[h])?,
                    get(&p("output.LayerNorm.bias"), &[h])?,
                ),
            });
        }
        Ok(Bert {
            pos: get(
                "embeddings.position_embeddings.weight",
                &[cfg.max_position_embeddings, h],
            )?,
            token_type: {
                let (shape, v) = t.get("embeddings.token_type_embeddings.weight")?;
                if shape.len() != 2 || shape[1] != h || shape[0] == 0 {
                    return Err(format!("token type embeddings are {shape:?}"));
                }
                v
            },
            ln: (
                get("embeddings.LayerNorm.weight", &[h])?,
                get("embeddings.LayerNorm.bias", &[h])?,
            ),
            word,
            layers,
            vocab,
            cfg,
        })
    }

    pub fn hidden(&self) -> usize {
        self.cfg.hidden_size
    }

    /// The last layer's states of `ids` (`[len, hidden]`, row-major); `Err` when the word
    /// table could not be read (its file changed under the model).
    pub fn forward(&self, ids: &[u32]) -> Result<Vec<f32>, String> {
        let h = self.cfg.hidden_size;
        let len = ids.len().min(self.cfg.positions());
        let first = self.cfg.first_position();
        let mut x = vec![0f32; len * h];
        for (t, id) in ids.iter().take(len).enumerate() {
            let id = (*id as usize).min(self.vocab - 1);
            let row = &mut x[t * h..(t + 1) * h];
            let pos = (first + t) * h;
            for (j, v) in row.iter_mut().enumerate() {
                *v = self.pos[pos + j] + self.token_type[j];
            }
            self.word.add_row(id, row)?;
        }
        layer_norm(&mut x, h, &self.ln, self.cfg.layer_norm_eps);
        let heads = self.cfg.num_attention_heads;
        let d = h / heads;
        let f = self.cfg.intermediate_size;
        let mut qkv = vec![0f32; len * 3 * h];
        let mut ctx = vec![0f32; len * h];
        let mut scores = vec![0f32; len * len];
        let mut tmp = vec![0f32; len * h];
        let mut inter = vec![0f32; len * f];
        for l in &self.layers {
            linear(&x, len, h, &l.qkv_w, &l.qkv_b, 3 * h, &mut qkv);
            for head in 0..heads {
                let (q, k, v) = (head * d, h + head * d, 2 * h + head * d);
                // SAFETY: every pointer and stride stays inside its buffer: `qkv` is
                // `[len, 3h]`, `scores` `[len, len]`, `ctx` `[len, h]`, and each head's
                // columns lie within its row.
                unsafe {
                    matrixmultiply::sgemm(
                        len,
                        d,
                        len,
                        1.0 / (d as f32).sqrt(),
                        qkv.as_ptr().add(q),
                        (3 * h) as isize,
                        1,
                        qkv.as_ptr().add(k),
                        1,
                        (3 * h) as isize,
                        0.0,
                        scores.as_mut_ptr(),
                        len as isize,
                        1,
                    );
                }
                for row in scores.chunks_exact_mut(len) {
                    softmax(row);
                }
                // SAFETY: as above.
                unsafe {
                    matrixmultiply::sgemm(
                        len,
                        len,
                        d,
                        1.0,
                        scores.as_ptr(),
                        len as isize,
                        1,
                        qkv.as_ptr().add(v),
                        (3 * h) as isize,
                        1,
                        0.0,
                        ctx.as_mut_ptr().add(head * d),
                        h as isize,
                        1,
                    );
                }
            }
            linear(&ctx, len, h, &l.out_w, &l.out_b, h, &mut tmp);
            add_into(&mut x, &tmp);
            layer_norm(&mut x, h, &l.ln1, self.cfg.layer_norm_eps);
            linear(&x, len, h, &l.inter_w, &l.inter_b, f, &mut inter);
            inter.iter_mut().for_each(|v| *v = gelu_erf(*v));
            linear(&inter, len, f, &l.down_w, &l.down_b, h, &mut tmp);
            add_into(&mut x, &tmp);
            layer_norm(&mut x, h, &l.ln2, self.cfg.layer_norm_eps);
        }
        Ok(x)
    }
}

/// Rows up to which [`linear`] reads each weight row once against every input row instead of
/// calling SGEMM: a query of a few tokens is bound by reading the weights (40 MB for
/// MiniLM), which SGEMM would first copy into its packed layout.
const FEW_ROWS: usize = 32;

/// `out[rows, n] = x[rows, k] · wᵀ + b`, with `w` stored `[n, k]` as PyTorch keeps it.
fn linear(x: &[f32], rows: usize, k: usize, w: &[f32], b: &[f32], n: usize, out: &mut [f32]) {
    assert!(x.len() >= rows * k && w.len() == n * k && b.len() == n && out.len() >= rows * n);
    if rows <= FEW_ROWS {
        return linear_few(&x[..rows * k], rows, k, w, b, n, &mut out[..rows * n]);
    }
    for row in out[..rows * n].chunks_exact_mut(n) {
        row.copy_from_slice(b);
    }
    // SAFETY: the sizes are checked above; `wᵀ` is read with row stride 1 and column stride k.
    unsafe {
        matrixmultiply::sgemm(
            rows,
            k,
            n,
            1.0,
            x.as_ptr(),
            k as isize,
            1,
            w.as_ptr(),
            1,
            k as isize,
            1.0,
            out.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// [`linear`] for a few rows: the outputs split in two halves run side by side, each weight
/// row read once and dotted with every input row.
fn linear_few(x: &[f32], rows: usize, k: usize, w: &[f32], b: &[f32], n: usize, out: &mut [f32]) {
    // `outᵀ` per half (`[n_half, rows]`), written back row-major after.
    let half = n / 2;
    let run = |from: usize, to: usize| -> Vec<f32> {
        let mut t = vec![0f32; (to - from) * rows];
        for (j, col) in (from..to).zip(t.chunks_exact_mut(rows)) {
            let wj = &w[j * k..(j + 1) * k];
            dots(x, k, wj, b[j], col);
        }
        t
    };
    let (lo, hi) = if n * k >= 1 << 16 {
        rayon::join(|| run(0, half), || run(half, n))
    } else {
        (run(0, half), run(half, n))
    };
    for (j, col) in lo.chunks_exact(rows).chain(hi.chunks_exact(rows)).enumerate() {
        for (r, v) in col.iter().enumerate() {
            out[r * n + j] = *v;
        }
    }
}

/// `col[r] = bias + x[r] · w` for each row `r` of `x` (`k` wide): with AVX2 and FMA where
/// the CPU has them (checked once per weight row), else in portable lanes.
fn dots(x: &[f32], k: usize, w: &[f32], bias: f32, col: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: both features were just detected on this CPU.
        unsafe { dots_fma(x, k, w, bias, col) };
        return;
    }
    for (r, o) in col.iter_mut().enumerate() {
        *o = bias + dot(&x[r * k..(r + 1) * k], w);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dots_fma(x: &[f32], k: usize, w: &[f32], bias: f32, col: &mut [f32]) {
    for (r, o) in col.iter_mut().enumerate() {
        *o = bias + dot_fma(&x[r * k..(r + 1) * k], w);
    }
}

/// [`dot`] with fused multiply-adds, in sixteen lanes: compiled to FMA instructions only
/// inside [`dots_fma`] (elsewhere `mul_add` would be a library call).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn dot_fma(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            acc[i] = x[i].mul_add(y[i], acc[i]);
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// A dot product in eight lanes (vectorised by the compiler).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

fn add_into(x: &mut [f32], y: &[f32]) {
    x.iter_mut().zip(y).for_each(|(a, b)| *a += b);
}

fn layer_norm(x: &mut [f32], h: usize, (w, b): &(Vec<f32>, Vec<f32>), eps: f32) {
    for row in x.chunks_exact_mut(h) {
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for (j, v) in row.iter_mut().enumerate() {
            *v = (*v - mean) * inv * w[j] + b[j];
        }
    }
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v));
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    row.iter_mut().for_each(|v| *v /= sum);
}

/// GELU as BERT defines it: `x · Φ(x)`, with erf to float precision.
fn gelu_erf(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

/// erf (Abramowitz & Stegun 7.1.26, error below 1.5e-7).
fn erf(x: f32) -> f32 {
    let sign = if x < 0.0 { -1.0 } else { 1.0 };
    let x = f64::from(x.abs());
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t + 0.254_829_592)
            * t
            * (-x * x).exp();
    sign * y as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_and_softmax() {
        for (x, want) in [
            (0.0f32, 0.0f32),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (-2.0, -0.995_322_3),
        ] {
            assert!((erf(x) - want).abs() < 1e-6, "{x}: {}", erf(x));
        }
        let mut r = [1.0, 2.0, 3.0];
        softmax(&mut r);
        assert!((r.iter().sum::<f32>() - 1.0).abs() < 1e-6 && r[2] > r[1]);
    }

    #[test]
    fn linear_is_x_times_w_transposed() {
        // x [2,3], w [2,3] (2 outputs), b [2].
        let (x, w, b) = ([1., 2., 3., 4., 5., 6.], [1., 0., 1., 0., 1., 0.], [10., 20.]);
        let mut out = [0f32; 4];
        linear(&x, 2, 3, &w, &b, 2, &mut out);
        assert_eq!(out, [14., 22., 20., 25.]);
    }

    /// The few-rows kernel answers what SGEMM does, for sizes on both sides of each split.
    #[test]
    fn few_rows_agree_with_sgemm() {
        let mut seed = 7u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        for (rows, k, n) in [(1, 3, 1), (3, 17, 5), (13, 384, 1152), (32, 100, 301), (33, 64, 64)] {
            let x: Vec<f32> = (0..rows * k).map(|_| next()).collect();
            let w: Vec<f32> = (0..n * k).map(|_| next()).collect();
            let b: Vec<f32> = (0..n).map(|_| next()).collect();
            let mut few = vec![0f32; rows * n];
            linear_few(&x, rows, k, &w, &b, n, &mut few);
            let mut reference = vec![0f32; rows * n];
            for r in 0..rows {
                for j in 0..n {
                    let s: f64 = (0..k).map(|i| f64::from(x[r * k + i]) * f64::from(w[j * k + i])).sum();
                    reference[r * n + j] = (s + f64::from(b[j])) as f32;
                }
            }
            // The portable lanes answer the same (the CPU here may take the FMA path).
            let mut portable = vec![0f32; rows * n];
            for r in 0..rows {
                for j in 0..n {
                    portable[r * n + j] = b[j] + dot(&x[r * k..(r + 1) * k], &w[j * k..(j + 1) * k]);
                }
            }
            for (p, want) in portable.iter().zip(&reference) {
                assert!((p - want).abs() < 1e-4, "portable {rows}x{k}x{n}: {p} {want}");
            }
            let mut via = vec![0f32; rows * n];
            linear(&x, rows, k, &w, &b, n, &mut via);
            for ((f, v), want) in few.iter().zip(&via).zip(&reference) {
                assert!(
                    (f - want).abs() < 1e-4 && (v - want).abs() < 1e-4,
                    "{rows}x{k}x{n}: {f} {v} {want}"
                );
            }
        }
    }
}
