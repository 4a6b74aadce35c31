//! Vectors as they are kept: int8 with one scale per vector (a quarter of f32's size; the
//! cosine of two kept vectors is within ~1% of the f32 one), and the products over them.

/// A unit vector in int8: `values[i] as f32 * scale` approximates the original.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantized {
    pub scale: f32,
    pub values: Vec<i8>,
}

impl Quantized {
    pub fn new(v: &[f32]) -> Quantized {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        Quantized {
            scale,
            values: v
                .iter()
                .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
                .collect(),
        }
    }

    /// The approximate dot product with another kept vector.
    pub fn dot(&self, other: &Quantized) -> f32 {
        dot_i8(&self.values, &other.values) as f32 * self.scale * other.scale
    }
}

/// The dot product of two int8 vectors: with AVX2 where the CPU has it (the scan of every
/// note's vector is most of a query at 100,000 notes), else the portable loop.
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the feature was just detected on this CPU.
        return unsafe { dot_i8_avx2(a, b) };
    }
    dot_i8_lanes(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_i8_lanes(a, b)
}

/// The loop the compiler vectorises (for the features of the function it is inlined into).
#[inline(always)]
fn dot_i8_lanes(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum()
}

/// `v` scaled to unit length (unchanged when it is zero).
pub fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut ab, mut aa, mut bb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 {
        0.0
    } else {
        ab / (aa.sqrt() * bb.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int8_keeps_the_cosine() {
        let mut a: Vec<f32> = (0..384).map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0).collect();
        let mut b: Vec<f32> = (0..384)
            .map(|i| ((i * 53 % 97) as f32 - 48.0) / 48.0 + a[i] * 0.5)
            .collect();
        normalize(&mut a);
        normalize(&mut b);
        let exact = cosine(&a, &b);
        let kept = Quantized::new(&a).dot(&Quantized::new(&b));
        assert!((exact - kept).abs() < 0.01, "{exact} vs {kept}");
        assert_eq!(Quantized::new(&[0.0; 4]).dot(&Quantized::new(&[0.0; 4])), 0.0);
        // Whichever path the CPU takes, the integer product is exact.
        let (qa, qb) = (Quantized::new(&a), Quantized::new(&b));
        assert_eq!(dot_i8(&qa.values, &qb.values), dot_i8_lanes(&qa.values, &qb.values));
        assert_eq!(dot_i8(&[-127; 7], &[127; 7]), -127 * 127 * 7);
    }
}
