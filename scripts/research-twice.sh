#!/usr/bin/env bash
# Offline research on every note of every obsidian-help language, twice: the second run must
# write the same bytes (the same vault text, the same section, whatever sections other notes
# gained meanwhile), and no note may fail. Prints, per language, the notes, the sections the
# second run changed (with the first three files) and the notes whose research failed (with
# scholia's message); then the totals, and what scripts/read-sections.py finds in the sections
# (passages with a markup defect, words shown that the cited note does not write). About 15
# minutes on 2 cores.
#
#   scripts/research-twice.sh                 # every language, into $TMPDIR/research-twice
#   scripts/research-twice.sh en de ja        # some languages
#   BIN=target/release/scholia scripts/research-twice.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VAULTS=../shared/vaults/obsidian-help
BIN=$(realpath "${BIN:-target/profiling/scholia}")
[ -x "$BIN" ] || cargo build --profile profiling
OUT=${TMPDIR:-/tmp}/research-twice
rm -rf "$OUT"; mkdir -p "$OUT/home"
export HOME=$OUT/home # the index cache goes here, not into the user's
langs=("$@")
[ ${#langs[@]} -gt 0 ] || mapfile -t langs < <(ls "$VAULTS" | grep -v '^Release notes$')
research_all() { # vault
    (cd "$1" && find . -name '*.md' -print0 |
        xargs -0 -P2 -I{} sh -c "'$BIN' research \"\$1\" --vault '$1' > /dev/null 2>> '$1.err' || echo \"FAIL \$1\" >> '$1.err'" _ {})
}
total=0 changed=0 failed=0
for l in "${langs[@]}"; do
    d=$OUT/$l
    cp -r "$VAULTS/$l" "$d"; chmod -R u+w "$d"
    "$BIN" index --vault "$d" > /dev/null 2>&1
    research_all "$d"
    cp -r "$d" "$d.first"; rm -f "$d.err"
    research_all "$d"
    n=$(find "$d" -name '*.md' | wc -l)
    c=$(diff -r -q "$d.first" "$d" | grep -c ' differ$' || true)
    f=$(grep -c '^FAIL' "$d.err" 2>/dev/null || true)
    echo "$l: $n notes, second run changed $c, failed ${f:-0}"
    diff -r -q "$d.first" "$d" | grep ' differ$' | head -3 | sed 's/^/    /' || true
    [ "${f:-0}" = 0 ] || grep -v '^FAIL' "$d.err" | sort | uniq -c | sed 's/^/    /'
    total=$((total + n)); changed=$((changed + c)); failed=$((failed + ${f:-0}))
done
echo "total: $total notes, second run changed $changed, failed $failed"
# What a reader would stumble on in the sections written: defects in passages, a passage twice,
# words shown as shared that the cited note does not write.
python3 scripts/read-sections.py "${langs[@]/#/$OUT/}"
