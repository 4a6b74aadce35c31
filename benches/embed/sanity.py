"""The issue's sanity figure for the paraphrase questions: the NumPy model of `reference.py`
reading each note's title plus its first 1,500 characters (256 tokens at most), mean-pooled,
answering each question by vectors alone. What the benchmark's "semantic" column is set beside.

    python3 benches/embed/sanity.py MODEL_DIR [--sections] [--keep-front-matter]

--sections also embeds each section of a note (title plus the section's first 1,000
characters, 12 sections at most) and scores a note by a mix of its whole vector and its best
section's: the figure for that reading, at several mixes. Needs numpy and tokenizers (scipy
makes it ~100x faster). About a minute for obsidian-help/en on 2 cores; four with --sections.
"""
import glob
import json
import os
import re
import sys

import numpy as np
from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference  # noqa: E402

VAULT = os.path.join(HERE, "../../../shared/vaults/obsidian-help/en")


def main():
    model = sys.argv[1]
    sections = "--sections" in sys.argv
    front = "--keep-front-matter" in sys.argv
    cfg = json.load(open(f"{model}/config.json"))
    w = reference.load(f"{model}/model.safetensors")
    tok = Tokenizer.from_file(f"{model}/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(256)

    def embed(text):
        return reference.embed(w, cfg, np.array(tok.encode(text).ids))

    notes = {}
    for path in sorted(glob.glob(VAULT + "/**/*.md", recursive=True)):
        text = open(path, encoding="utf-8", errors="replace").read()
        title = os.path.basename(path)[:-3]
        if not front and text.startswith("---"):
            end = text.find("\n---", 3)
            text = text[end + 4:] if end > 0 else text
        parts = []
        if sections:
            for part in re.split(r"\n(?=#{1,4} )", text)[:12]:
                if len(part.strip()) >= 40:
                    parts.append(embed(title + "\n" + part.strip()[:1000]))
        notes[title] = (embed(title + "\n" + text[:1500]), parts)
    questions = json.load(open(os.path.join(HERE, "questions.json")))
    asked = {q["q"]: embed(q["q"]) for split in ("dev", "held_out") for q in questions[split]}

    def score(title, q, mix):
        whole, parts = notes[title]
        best = max((float(p @ q) for p in parts), default=float(whole @ q))
        return mix * float(whole @ q) + (1 - mix) * best

    for mix in (1.0, 0.7, 0.5, 0.3, 0.0) if sections else (1.0,):
        line = []
        for split in ("dev", "held_out"):
            answered, missed = 0, []
            for q in questions[split]:
                v = asked[q["q"]]
                order = sorted(notes, key=lambda t: (-score(t, v, mix), t))
                rank = next((i + 1 for i, t in enumerate(order) if t in q["answers"]), None)
                answered += rank is not None and rank <= 5
                if rank is None or rank > 5:
                    missed.append(f"{q['answers'][0]} ({rank})")
            line.append(f"{split} {answered}/{len(questions[split])} (missed: {', '.join(missed)})")
        label = f"whole {mix:.1f} + best section {1 - mix:.1f}" if sections else "title + 1,500 characters"
        print(f"{label}: " + "; ".join(line))


if __name__ == "__main__":
    main()
