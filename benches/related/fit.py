"""Fits the weights of scholia_index::Signals to hidden-link recall@10.

    RELATED_DUMP=/tmp/dump cargo bench --bench related -- --all
    python3 benches/related/fit.py /tmp/dump        # needs numpy

The bench writes, per language and per draw of hidden links (the second as LANG#2.json, a
language of its own here), every candidate's evidence for every measured note (the
fields of `Evidence`, in order) with the hidden and the visible links. This searches the
weights one coordinate at a time for the best mean recall@10 plus half the lowest language's,
starting from the weights in `Signals::default()` (`linked` stays: linked notes are excluded).
The figure it prints leaves out what offline research does after ranking (notes without a
passage are skipped), so the bench's own figure is ~0.02 lower.

It then prints a held-out figure: the weights fitted on one half of the notes (first draw) and
scored on the other half (second draw). The halves split notes by their `permalink`, which the
translations of one page share: split by language instead, a fit meets in its test set the
same pages, with the same links, that it was fitted on (a learned ranker, LightGBM's
lambdarank, gained +0.03 that way and nothing on this split).
"""
import glob
import json
import os
import re
import sys
import zlib

import numpy as np

NAMES = ["content", "linked", "names_it", "named_by", "shared_tag", "neighbour", "cocited",
         "folder", "folder_linked", "similar", "popularity", "name_stems", "meaning", "link_folder", "alike_link", "part_similar"]
START = [0.49, 1.5, 0.1, 0.14, 0.3, 0.28, 0.034, 0.7, 1.0, 2.8, 0.2, 0.4, 0.25, 0.5, 0.6, 1.5]


VAULT = os.path.join(os.path.dirname(__file__), "../../../shared/vaults/obsidian-help")


def half_of(lang, rel):
    """0 or 1: which half of the held-out split the note is in (by its page's permalink)."""
    try:
        head = open(os.path.join(VAULT, lang, rel), encoding="utf-8", errors="replace").read(600)
    except OSError:
        head = ""
    m = re.search(r"^permalink:\s*(\S+)", head, re.M)
    return zlib.crc32((m.group(1) if m else rel).encode()) % 2


def load(folder, halves=False):
    data = {}
    for path in sorted(glob.glob(f"{folder}/*.json")):
        d = json.load(open(path))
        notes = []
        for m in d["measured"]:
            if halves is not False and half_of(d["lang"].split("#")[0], m["rel"]) != halves:
                continue
            seen = set(m["visible"]) | {m["rel"]}
            cands = sorted(set(m["evidence"]) - seen)
            x = np.array([m["evidence"][c] for c in cands], dtype=float).reshape(-1, len(NAMES))
            y = np.array([c in set(m["hidden"]) for c in cands])
            notes.append((x, y, len(m["hidden"])))
        data[d["lang"]] = notes
    return data


def recall(data, w, k=10):
    out = {}
    for lang, notes in data.items():
        total = 0.0
        for x, y, hidden in notes:
            if len(y):
                total += y[np.argsort(-(x @ w), kind="stable")[:k]].sum() / hidden
        out[lang] = total / len(notes)
    return out


def fit(data):
    """The weights, searched from START, and each language's recall with them."""
    w = np.array(START)

    def objective(w):
        r = recall(data, w)
        return np.mean(list(r.values())) + 0.5 * min(r.values()), r

    best, r = objective(w)
    for _ in range(2):
        for i, name in enumerate(NAMES):
            if name == "linked":
                continue
            for v in [0.0] + [w[i] * f for f in (0.5, 0.7, 1.4, 2.0)] + [0.05, 0.1, 0.2, 0.5, 1, 2, 5]:
                trial = w.copy()
                trial[i] = v
                o, tr = objective(trial)
                if o > best + 1e-6:
                    best, w, r = o, trial, tr
    return w, r


def summary(r):
    return f"mean {np.mean(list(r.values())):.3f}, lowest {min(r.values()):.3f}"


def main():
    data = load(sys.argv[1])
    w, r = fit(data)
    print({n: round(float(x), 3) for n, x in zip(NAMES, w)})
    print(summary(r))
    for lang, x in sorted(r.items(), key=lambda kv: kv[1]):
        print(f"{lang:<6} {x:.3f}")
    for train in (0, 1):
        fitted, _ = fit({k: v for k, v in load(sys.argv[1], train).items() if "#" not in k})
        test = {k: v for k, v in load(sys.argv[1], 1 - train).items() if "#" in k}
        print(f"held out (fitted on half {train} of the pages, first draw; scored on the other half, "
              f"second draw): weights as they are {summary(recall(test, np.array(START)))}; "
              f"refitted {summary(recall(test, fitted))}")


if __name__ == "__main__":
    main()
