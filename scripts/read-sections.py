"""Reads the offline research sections of copies of obsidian-help as a reader would, and counts
what a reader would stumble on. For each language directory given:

- passages with a hygiene defect: a fragment (a sentence cut after an abbreviation, which
  closes a bracket it never opened or starts `B. das`), a backslash escape, bold markers, an
  HTML entity, empty brackets, two lines glued (`end.Next`), code showing ` › ` for `#`, a
  bare label of a few CJK characters; the same as `hygiene_defects` in tests/it/related.rs;
- the same passage twice in one section, or a near copy of one before it (sharing 0.6 of the
  words either holds, character pairs in a script without spaces: offline/quoted.rs);
- words shown as shared with a cited note, in a script without spaces, that the cited note
  does not write (a character pair the two notes share, shown as a word only one has).

    python3 scripts/read-sections.py DIR...       # e.g. $TMPDIR/research-twice/{ja,zh,th}

scripts/research-twice.sh runs it on what it wrote. Only the standard library.
"""
import glob
import os
import re
import sys
import unicodedata
from collections import Counter, defaultdict


def defects(p):
    prose, code = [], []
    for i, part in enumerate(p.split("`")):
        if i % 2 == 0:
            prose.append(part)
        else:  # code: the note's own, one placeholder in the prose
            prose.append("x")
            code.append(part)
    prose, code = "".join(prose), "\n".join(code)
    han_kana = sum(1 for c in p if 0x3040 <= ord(c) <= 0x30FF or 0x3400 <= ord(c) <= 0x4DBF or 0x4E00 <= ord(c) <= 0x9FFF)
    ended = p.rstrip("…").endswith(tuple("。！？.!?")) or p.endswith("…")
    found = []
    depth, unopened = 0, False
    for c in prose:
        depth += (c in "(（") - (c in ")）")
        unopened = unopened or depth < 0
    if unopened or re.match(r"^[^\W\d_]\. [^\W\d_]", prose) and prose[0].isupper() and prose[3].islower():
        found.append("a fragment")
    if " › " in code:
        found.append("code with › for #")
    if "\\" in prose:
        found.append("a backslash escape")
    if "**" in prose:
        found.append("bold markers")
    if any(e in prose for e in ("( )", "()", "（ ）", "（）")):
        found.append("empty brackets")
    if re.search(r"[a-zx]\.[A-Z][a-z]", prose):
        found.append("glued lines")
    if any(e in prose for e in ("&#", "&amp;", "&lt;", "&gt;", "&quot;")):
        found.append("an HTML entity")
    if 0 < han_kana < 16 and not ended and len(p.split()) < 4:
        found.append("a label")
    return found


def unspaced(w):
    return any(
        0x3040 <= ord(c) <= 0x30FF or 0x4E00 <= ord(c) <= 0x9FFF or 0x0E00 <= ord(c) <= 0x0EFF
        or 0x1780 <= ord(c) <= 0x17FF or 0x1000 <= ord(c) <= 0x109F
        for c in w
    )


def word_char(c):
    """A letter or digit, or a mark written on one (Thai's vowels, Khmer's, Bengali's virama):
    `\\w` ends a word at each mark and cut `আপনার` into `আপন`, `র`. As the index's
    `is_word_char`: in the scripts of India, only a danda ends a word."""
    i = ord(c)
    if 0x0900 <= i <= 0x0DFF:
        return i not in (0x0964, 0x0965, 0x0970, 0x0DF4)
    return c.isalnum() or c == "_" or unicodedata.category(c)[0] == "M"


def split_words(p):
    out, w = [], []
    for c in p + " ":
        if word_char(c):
            w.append(c)
        elif w:
            out.append("".join(w))
            w = []
    return out


def words(p):
    """A passage's words, lower-cased; a script without spaces as character pairs."""
    out = set()
    for w in split_words(p.lower()):
        if unspaced(w) and len(w) > 1:
            out.update(w[i : i + 2] for i in range(len(w) - 1))
        else:
            out.add(w)
    return out


def near_copy(a, b):
    shared = len(a & b)
    return shared > 0 and shared * 5 >= 3 * len(a | b)


def owner_text(path):
    t = open(path, encoding="utf-8", errors="replace").read()
    i = t.find("\n## Research")
    return t if i < 0 else t[:i]


def readable(t):
    """Markdown as read: a link as its text, without emphasis or code marks (`选择**检查更新**`
    reads `选择检查更新`)."""
    t = re.sub(r"!?\[\[([^\]|]*)\|([^\]]*)\]\]", r"\2", t)
    t = re.sub(r"!?\[\[([^\]]*)\]\]", r"\1", t)
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)
    return re.sub(r"\*\*|__|[*_`~=]", "", t)


def read(d):
    texts = defaultdict(list)  # a link target (file name, or path) -> the texts of the notes it may name
    notes = glob.glob(d + "/**/*.md", recursive=True)
    for p in notes:
        raw = owner_text(p)
        own = raw + "\n" + readable(raw) + "\n" + os.path.basename(p)[:-3]
        texts[os.path.basename(p)[:-3]].append(own)
        texts[os.path.relpath(p, d)[:-3]].append(own)
    passages, seen_twice, copies, shown, not_written = 0, 0, 0, 0, 0
    kinds, examples = Counter(), []
    for p in notes:
        t = open(p, encoding="utf-8", errors="replace").read()
        i = t.find("\n## Research")
        if i < 0:
            continue
        seen, seen_words = set(), []
        for line in t[i:].split("\n"):
            if line.startswith("  > "):
                q = line[4:]
                passages += 1
                w = words(q)
                if q in seen:
                    seen_twice += 1
                elif any(near_copy(w, o) for o in seen_words):
                    copies += 1
                    examples.append(f"{os.path.relpath(p, d)}: a near copy: {q[:120]}")
                seen.add(q)
                seen_words.append(w)
                for k in defects(q):
                    kinds[k] += 1
                    examples.append(f"{os.path.relpath(p, d)}: {k}: {q[:120]}")
            m = re.match(r"- \[\[([^\]|#]+)[^\]]*\]\] — (.*)$", line)
            if not m or "[[" in m.group(2):
                continue
            candidates = texts.get(m.group(1), [])
            for w in re.split(r"[、,，] ?", m.group(2)):
                w = w.strip()
                # Ties (`同じフォルダ「…/」`, numbers) are sentences, not words.
                if not w or not unspaced(w) or "/" in w or any(c.isdigit() for c in w) or not candidates:
                    continue
                shown += 1
                if not any(w in c for c in candidates):
                    not_written += 1
                    examples.append(f"{os.path.relpath(p, d)}: not in [[{m.group(1)}]]: {w}")
    print(
        f"{os.path.basename(d)}: {passages} passages, {sum(kinds.values())} with a defect {dict(kinds)}, "
        f"{seen_twice} twice in a section, {copies} near copies; {shown} unspaced words shown, {not_written} not written by the note cited"
    )
    for e in examples[:3]:
        print("    " + e)
    return sum(kinds.values()) + seen_twice + copies + not_written


if __name__ == "__main__":
    bad = sum(read(d.rstrip("/")) for d in sys.argv[1:])
    print(f"total: {bad} things a reader would stumble on")
