"""A plain NumPy sentence-transformers BERT or XLM-RoBERTa (all-MiniLM-L6-v2's layout): the
reference the Rust model is checked against, and the sanity figure of the paraphrase benchmark.

    python3 benches/embed/reference.py MODEL_DIR "sentence one" "sentence two" ...

prints one JSON line per sentence: its token ids and its normalised mean-pooled embedding.
Needs numpy and tokenizers (pip install numpy tokenizers); nothing else.
"""
import json
import struct
import sys

import numpy as np
from tokenizers import Tokenizer


def load(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] != "F32":
            continue
        a, b = t["data_offsets"]
        out[name.removeprefix("bert.").removeprefix("roberta.")] = np.frombuffer(data[a:b], dtype=np.float32).reshape(t["shape"])
    return out


def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    try:  # scipy's erf is the same function, a hundred times faster
        from scipy.special import erf
    except ImportError:
        from math import erf
        erf = np.vectorize(erf)
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def embed(w, cfg, ids):
    n_heads = cfg["num_attention_heads"]
    norm = lambda x, w_, b_: layer_norm(x, w_, b_, cfg.get("layer_norm_eps", 1e-12))
    # XLM-RoBERTa numbers positions after the padding id (from 2); BERT from 0.
    first = cfg.get("pad_token_id", 1) + 1 if cfg.get("model_type") in ("roberta", "xlm-roberta", "camembert") else 0
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][first : first + len(ids)]
    x = x + w["embeddings.token_type_embeddings.weight"][0]
    x = norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    d = x.shape[1] // n_heads
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        lin = lambda h, n: h @ w[p + n + ".weight"].T + w[p + n + ".bias"]
        q, k, v = lin(x, "attention.self.query"), lin(x, "attention.self.key"), lin(x, "attention.self.value")
        ctx = np.zeros_like(x)
        for h in range(n_heads):
            s = slice(h * d, (h + 1) * d)
            scores = q[:, s] @ k[:, s].T / np.sqrt(d)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx[:, s] = scores @ v[:, s]
        x = norm(x + lin(ctx, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        inter = gelu(lin(x, "intermediate.dense"))
        x = norm(x + lin(inter, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def main():
    model = sys.argv[1]
    cfg = json.load(open(f"{model}/config.json"))
    w = load(f"{model}/model.safetensors")
    tok = Tokenizer.from_file(f"{model}/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(256)
    for text in sys.argv[2:]:
        ids = tok.encode(text).ids
        print(json.dumps({"text": text, "ids": ids, "embedding": [round(float(v), 6) for v in embed(w, cfg, np.array(ids))]}))


if __name__ == "__main__":
    main()
