"""Builds the SentencePiece (Unigram) tokenizer the Rust reader is checked against, and the ids
Hugging Face's `tokenizers` gives for hostile text and for notes in every language of the vault.

    python3 benches/embed/unigram_fixture.py VAULT OUT_DIR [--all]

OUT_DIR gets `tokenizer.json` (an XLM-RoBERTa tokenizer: SentencePiece's nmt_nfkc charsmap,
Metaspace, `<s> … </s>`, converted by `transformers` as the multilingual sentence-transformers
models were) and `ids.jsonl`: one line per text, its ids under that file and, where they
differ, under its older form (`Precompiled` alone, `add_prefix_space`, and XLM-RoBERTa's added
tokens, `<mask>` with `lstrip`). With `--all`, every note's first 4,000 characters instead of
a sample (a one-off check, about 100 MB; too large to keep), read by the Rust test with

    SCHOLIA_SPM_REFERENCE=OUT_DIR cargo test -p scholia-embed --release spm::tests::ids

Needs sentencepiece, protobuf, transformers and tokenizers (pip); not torch.
"""
import json
import os
import pathlib
import sys

import sentencepiece as spm
from tokenizers import Tokenizer
from transformers.convert_slow_tokenizer import XLMRobertaConverter

HOSTILE = [
    "",
    " ",
    "Hello world",
    "  two  spaces   and three   ",
    "tab\tand\nnewline\r\nend",
    "<s>struck</s> and <mask> and <pad><unk>",
    "a<mask>b  <mask>  c",
    "™ ½ ﬁ Ⅻ ｆｕｌｌ　ｗｉｄｔｈ ｶﾀｶﾅ",
    "Café naïve coöperate e\u0301 n\u0303",
    "👩‍👩‍👧‍👦 🇩🇪 👍🏽 ❤️ 1️⃣",
    "zero\u200bwidth\u00adsoft\u200dhyphen\ufeffbom",
    "日本語のテキスト、カタカナ、ひらがな。",
    "한국어 텍스트 ᄀᄁ 가각",
    "中文文本：你好，世界！",
    "Ελληνικά κείμενο ΣΊΣΥΦΟΣ",
    "Русский текст Ёлка",
    "العربية مُشَكَّلة ﻻ ﷺ",
    "עברית עם ניקוד: שָׁלוֹם",
    "ภาษาไทย ไม่มีช่องว่าง",
    "हिन्दी पाठ क्षत्रिय",
    "বাংলা লেখা",
    "Tiếng Việt có dấu: Nguyễn",
    "x" * 300,
    "antidisestablishmentarianism" * 5,
    "\x00\x01control\x7f\x9fchars",
    "[[Internal link|alias]] `code` **bold** #tag https://example.com/a%20b",
    "\ud7ff\ue000\U0010fffd private use",
]


def sample(vault, per_lang, chars):
    texts = []
    for lang in sorted(os.listdir(vault)):
        d = pathlib.Path(vault) / lang
        if not d.is_dir():
            continue
        notes = sorted(p for p in d.rglob("*.md"))
        step = max(1, len(notes) // per_lang) if per_lang else 1
        for p in notes[::step][: per_lang or None]:
            texts.append(p.read_text(encoding="utf-8", errors="replace")[:chars])
    return texts


def main():
    vault, out = sys.argv[1], pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    train = out / "train.txt"
    with open(train, "w", encoding="utf-8") as f:
        for t in sample(vault, 40, 3000):
            f.write(t + "\n")
    spm.SentencePieceTrainer.train(
        input=str(train), model_prefix=str(out / "spm"), vocab_size=3000, model_type="unigram",
        character_coverage=0.9995, input_sentence_size=200000, shuffle_input_sentence=False,
        num_threads=1, seed_sentencepiece_size=200000,
    )
    class Original:  # what the converter asks of the slow tokenizer
        vocab_file = str(out / "spm.model")

        def convert_tokens_to_ids(self, token):
            return {"<s>": 0, "</s>": 2}[token]

    XLMRobertaConverter(Original()).converted().save(str(out / "tokenizer.json"))
    current = Tokenizer.from_file(str(out / "tokenizer.json"))
    old = json.load(open(out / "tokenizer.json"))
    old["normalizer"] = next(n for n in old["normalizer"]["normalizers"] if n["type"] == "Precompiled")
    old["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True}
    # XLM-RoBERTa's own added tokens: `<mask>` takes the spaces before it.
    old["added_tokens"] = [
        {"id": i, "content": c, "single_word": False, "lstrip": c == "<mask>", "rstrip": False,
         "normalized": False, "special": True}
        for i, c in [(0, "<s>"), (1, "<pad>"), (2, "</s>"), (3, "<unk>"), (len(old["model"]["vocab"]) - 1, "<mask>")]
    ]
    older = Tokenizer.from_str(json.dumps(old))
    texts = HOSTILE + (sample(vault, 0, 4000) if "--all" in sys.argv else sample(vault, 2, 500))
    with open(out / "ids.jsonl", "w", encoding="utf-8") as f:
        for t in texts:
            line = {"text": t, "ids": current.encode(t).ids}
            if older.encode(t).ids != line["ids"]:
                line["older"] = older.encode(t).ids
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    for name in ("train.txt", "spm.vocab", "spm.model"):
        (out / name).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
