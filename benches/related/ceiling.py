"""How far the evidence scholia gathers can carry hidden-link recall@10: the fitted linear
weights beside gradient-boosted trees over the same figures, trained on three quarters of the
languages and measured on the rest.

    RELATED_DUMP=/tmp/dump cargo bench --bench related -- --all
    python3 benches/related/ceiling.py /tmp/dump        # needs numpy and scikit-learn

obsidian-help's languages are translations of one vault: the same notes, the same links, nearly
the same figures. Trees free to split anywhere learn single notes by their exact figures (a
note's popularity is ln(1 + its links), a folder's weight 1 / ln(2 + its size)) and score well
on their translations. Trees held monotone (more evidence never lowers a score) cannot pick
out one value between two, so they measure what the figures say, not which notes they are.

Measured on stop 52's dumps (34 languages; trees without early stopping, seed 0, so a run
repeats), as the figures grew:

                                  13 figures     + link_folder   + alike_link
    linear, the weights           0.681 / 0.633  0.704 / 0.664   0.720 / 0.679
    trees, monotone (31 leaves)   0.682 / 0.616  0.720 / 0.668   0.732 / 0.690
    trees, monotone (depth 1)     0.679 / 0.623  0.705 / 0.661   0.714 / 0.672
    trees, free (31 leaves)       0.712 / 0.617  0.759 / 0.695   0.770 / 0.713  <- translations

(mean / lowest language). Each new kind of evidence moved the ceiling; weighing the same
figures otherwise did not: with link_folder, no product of it with another figure and no curve
of it (square root, log, a step), weighed on half the languages, moved the other half by more
than 0.003. Even the monotone trees' lowest language stays under 0.70: recall there needs
evidence scholia does not gather yet.

Two kinds tried since on the same dumps (stop 53's weights as the start; a Python figure added
to each candidate, its weight searched as fit.py does), neither kept:
- where a linking note cites the two (co-citation proximity: the same paragraph or list, the
  same section, or by the lines between): its weight searched alone stays 0 (0.704 / 0.637);
- the visible texts other notes give their links to a candidate (`[[Formulas|Bases formulas]]`)
  found in the note's text, as more names of it: it fires on 3.5 % of candidates and 23 % of
  hidden links, but most of them other evidence already finds; refitting every weight with it
  gives 0.713 / 0.667 against 0.709 / 0.666 without, in sample.

Kept (stop 71): the best cosine of one part of the note, between two headings, with a candidate
(`part_similar`). Tried first here as a Python figure on words, not stems: 0.704 / 0.637 ->
0.710 / 0.653 (the candidate's best part against the whole note instead: 0.709 / 0.645). In
the index, on stems, fit.py's figure 0.704 / 0.666 -> 0.707 / 0.674, and the bench's 0.701 /
0.662 -> 0.704 / 0.671.
"""
import sys

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from fit import NAMES, START, load  # noqa: E402


def recall(notes, score, k=10):
    total = 0.0
    for x, y, hidden in notes:
        if len(y):
            total += y[np.argsort(-score(x), kind="stable")[:k]].sum() / hidden
    return total / len(notes)


def main():
    data = load(sys.argv[1])
    langs = sorted(data)
    folds = [langs[i::4] for i in range(4)]
    w = np.array(START)
    rows = {"linear, today's weights": {lang: recall(data[lang], lambda x: x @ w) for lang in langs}}
    for name, options in [
        ("trees, free (31 leaves)", dict(max_leaf_nodes=31, min_samples_leaf=50)),
        ("trees, monotone (31 leaves)", dict(max_leaf_nodes=31, min_samples_leaf=50, monotonic_cst=[1] * len(NAMES))),
        ("trees, monotone (depth 1)", dict(max_depth=1, min_samples_leaf=200, monotonic_cst=[1] * len(NAMES))),
    ]:
        got = {}
        for fold in folds:
            train = [x for lang in langs if lang not in fold for x in data[lang] if len(x[1])]
            model = HistGradientBoostingClassifier(max_iter=300, learning_rate=0.05, early_stopping=False, random_state=0, **options)
            model.fit(np.vstack([x for x, _, _ in train]), np.concatenate([y for _, y, _ in train]))
            for lang in fold:
                got[lang] = recall(data[lang], lambda x: model.predict_proba(x)[:, 1])
        rows[name] = got
    for name, got in rows.items():
        print(f"{name:<30} mean {np.mean(list(got.values())):.3f}, lowest {min(got.values()):.3f} ({min(got, key=got.get)})")


if __name__ == "__main__":
    main()
