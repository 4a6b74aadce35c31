"""A tiny XLM-RoBERTa sentence-transformers directory with random weights, and the vectors the
NumPy reference (`reference.py`) gives for it: the check that the Rust model reads XLM-RoBERTa
as the multilingual models are (positions from 2, one token type, `roberta.` names) with a
SentencePiece tokenizer.

    python3 benches/embed/tiny_xlmr.py TOKENIZER_DIR OUT_DIR

TOKENIZER_DIR holds the `tokenizer.json` of `unigram_fixture.py`; OUT_DIR gets config.json,
model.safetensors, 1_Pooling/config.json, sentence_bert_config.json and reference.jsonl (the
tokenizer is not copied: the test puts the two together). Needs numpy, scipy and tokenizers.
"""
import json
import pathlib
import struct
import sys

import numpy as np
from tokenizers import Tokenizer

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from reference import embed, load  # noqa: E402

TEXTS = [
    "Hello world",
    "Notizen verknüpfen: [[Dateien]] und <mask> Ordner",
    "日本語のノートとリンク",
    "Заметки и ссылки",
    "ملاحظات وروابط",
    "Ghi chú và liên kết trong Obsidian",
    "<s>struck</s> text",
    "a long note " * 60,
]


def main():
    tok_dir, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    (out / "1_Pooling").mkdir(parents=True, exist_ok=True)
    vocab = len(json.load(open(tok_dir / "tokenizer.json"))["model"]["vocab"])
    h, f, layers, positions = 12, 24, 2, 66
    cfg = {
        "model_type": "xlm-roberta", "hidden_size": h, "num_attention_heads": 3, "num_hidden_layers": layers,
        "intermediate_size": f, "max_position_embeddings": positions, "pad_token_id": 1,
        "type_vocab_size": 1, "layer_norm_eps": 1e-5, "hidden_act": "gelu", "vocab_size": vocab,
    }
    rng = np.random.default_rng(39)
    shapes = {
        "embeddings.word_embeddings.weight": [vocab, h],
        "embeddings.position_embeddings.weight": [positions, h],
        "embeddings.token_type_embeddings.weight": [1, h],
        "embeddings.LayerNorm.weight": [h], "embeddings.LayerNorm.bias": [h],
    }
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for n in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            shapes[p + n + ".weight"], shapes[p + n + ".bias"] = [h, h], [h]
        shapes[p + "intermediate.dense.weight"], shapes[p + "intermediate.dense.bias"] = [f, h], [f]
        shapes[p + "output.dense.weight"], shapes[p + "output.dense.bias"] = [h, f], [h]
        for n in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + n + ".weight"], shapes[p + n + ".bias"] = [h], [h]
    tensors = {}
    for name, shape in shapes.items():
        scale = 1.0 if name.endswith("LayerNorm.weight") else 0.0
        tensors["roberta." + name] = (scale + rng.normal(0, 0.3, shape)).astype(np.float32)
    header, blobs, at = {}, [], 0
    for name, t in tensors.items():
        b = t.tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    head = json.dumps(header).encode()
    with open(out / "model.safetensors", "wb") as fh:
        fh.write(struct.pack("<Q", len(head)) + head + b"".join(blobs))
    json.dump(cfg, open(out / "config.json", "w"), indent=1)
    json.dump({"word_embedding_dimension": h, "pooling_mode_mean_tokens": True}, open(out / "1_Pooling/config.json", "w"))
    json.dump({"max_seq_length": 128, "do_lower_case": False}, open(out / "sentence_bert_config.json", "w"))
    w = load(out / "model.safetensors")
    tok = Tokenizer.from_file(str(tok_dir / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(positions - 2)  # the position table's room after the first two
    with open(out / "reference.jsonl", "w", encoding="utf-8") as fh:
        for text in TEXTS:
            ids = tok.encode(text).ids
            v = embed(w, cfg, np.array(ids))
            fh.write(json.dumps({"text": text, "ids": ids, "embedding": [round(float(x), 6) for x in v]}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
