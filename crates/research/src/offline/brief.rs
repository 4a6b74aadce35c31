//! Which entries of an offline section are brief (named on one line with what found them,
//! without passages), and that line's groups.

use serde_json::{Value, json};

use super::RelatedNote;
use scholia_index::{Tie, WordsShare};

/// Entries shown whole, with their passages, whatever their score.
const WHOLE_ENTRIES: usize = 5;
/// Past [`WHOLE_ENTRIES`], an entry scoring below this share of the best is brief.
const BRIEF_BELOW: f32 = 0.7;
/// From this entry on (0-based), one found by its words with no passage telling why is brief.
const TOLD_FROM: usize = 3;
/// An entry found by its words scoring under one of these ([`scholia_index::Signals::score`],
/// the evidence weighed) is brief wherever it ranks, once another reaches it ([`weak_floor`]):
/// the highest another reaches.
const WEAK_BELOW: [f32; 2] = [1.8, 1.5];

/// An entry found by its words is weak wherever it ranks when what its words share with the
/// note ([`WordsShare`]) is under [`ABOVE_USUAL`] times what the median note sharing one of its
/// stems shares, and under [`CHANCE_COSINE`]: its words are the vault's chance words (en Pop-out
/// windows -> Ribbon by "associated, window, Move, drag"; de Falten -> Menüband by
/// "umzuschalten, ausblenden"), however much its links and folder raise its score.
///
/// Read on 145 whole entries of obsidian-help en, de and ja, each graded by one reader before
/// its figures were read (2 glad, 1 of some use, 0 chance words; `cargo bench --bench related
/// -- --graded`). Of the first 80 (en, de), 20 were under 2.5 times the usual: 16 graded 0, 3
/// graded 1, 1 graded 2. Of 65 more (en, de, ja), 13: 9 graded 0, 4 graded 1. The cosine bound
/// came after both: a long note shares more with every note, and en Troubleshoot Obsidian
/// Sync's entries on conflicts and storage (cosines 0.17 to 0.27) were all under 2.5 times its
/// usual. With it, 13 / 1 / 0 and 9 / 4 / 0 of the two sets go brief, and the mean grade of the
/// entries still whole goes 0.82 -> 0.98 and 0.78 -> 0.90. Japanese entries stand higher above
/// their usual: 3 of the 13 graded 0 went brief. Of 50 fr and es entries graded after the rule
/// was written, 10 graded 0 and 4 graded 1 go brief (0.58 -> 0.69; in fr, 2 and 4).
///
/// With all-MiniLM-L6-v2's vectors in the evidence (`--graded --model DIR`), 13 / 1 / 0 and
/// 11 / 5 / 0 of the first two sets go brief (0.98 and 0.94). Sparing the entries near in
/// meaning (vectors' cosine 0.35 or more) kept 6 and 5 of those graded 0 whole to spare 1 and 3
/// graded 1: in a vault on one subject, most notes are that near.
///
/// On obsidian-help's 34 languages (`cargo bench --bench related -- --all`, both draws): the
/// whole entries per note go 3.93 -> 3.43, and the author's links among them 0.353 -> 0.370;
/// 0.23 of those made brief were the author's links, against 0.13 of the brief line before.
/// 138 of 7,302 sections have no whole entry (4 before). The notes cited, and so recall, are
/// the same.
const ABOVE_USUAL: f32 = 2.5;
/// See [`ABOVE_USUAL`]: a stem cosine of obsidian-help's scale in its European languages.
const CHANCE_COSINE: f32 = 0.16;

/// An entry found by its words is weak when many notes link it and its words share little
/// more with the note than that many notes' words would: a cosine under [`KNOWN_COSINE`] times
/// (ln(1 + the notes linking it) - 1). Linked from 5 notes it needs 0.079, from 10 0.14, from
/// 65 (obsidian-help's Settings) 0.32; linked from one, any. A note many link is one a reader
/// knows (Settings, Search, Sidebar, Ribbon, Hotkeys), and its many sections meet most notes'
/// words; the ranking likes it, since authors link it often, but the reader learns nothing.
///
/// Of the reader's grades (`--graded`), how many notes link an entry told more than any other
/// figure but the cosine whether it was chance: an entry graded 0 was linked by more notes
/// than one graded 1 or 2 with a chance of 0.71 (it shared the lower cosine with 0.73). The
/// bound was read on the 195 entries graded before. On those, beside the rules above, it
/// makes 17 graded 0, 5 graded 1 and 2 graded 2 brief: the mean grade of the entries still
/// whole goes 0.98 -> 1.07, 0.90 -> 1.05 and 0.69 -> 0.76 in the three sets. Then it was
/// checked on 48 entries those rules leave whole, drawn from en, it, zh and pt-br and graded
/// before their figures were read (set "checked3"): 8 graded 0 go brief and 1 graded 1, and
/// the mean grade of the rest goes 0.75 -> 0.90.
///
/// The cosine is a stem cosine on the European languages' scale, and where cosines run about
/// half (vi, ja, zh, th) the bound fires most: of the entries it makes brief over 34 languages,
/// vi 146, ja 115, zh 91 against da 24, de 55. So last, 48 entries of the bench's sections
/// (ja, zh-TW, vi, ru, de, es), 24 it makes brief and 24 it leaves whole, were shuffled and
/// graded without knowing which was which: those made brief 14 / 9 / 1 (mean 0.46), those left
/// whole 2 / 14 / 8 (1.25); in ja, zh-TW and vi alone 0.42 against 1.17. It fires more there,
/// on entries as poor.
///
/// On obsidian-help's 34 languages (`--all`, both draws): recall unchanged (the notes cited are
/// the same); whole entries per note 3.43 -> 3.14; 284 of 7,302 sections have no whole entry
/// (138 before). The author's links among the whole entries stay 0.37, and of those made brief
/// 0.38 were the author's links (the brief line's 0.14): authors link the notes everyone links,
/// and by that measure these entries were as good as any. The reader's grades say otherwise.
const KNOWN_COSINE: f32 = 0.1;

/// Whether an entry scoring `score`, its words sharing `words`, is weak: under the note's
/// `floor` ([`weak_floor`]), by chance words ([`ABOVE_USUAL`]), or a note many link by few
/// words ([`KNOWN_COSINE`]).
pub(super) fn weak(score: f32, floor: f32, words: WordsShare) -> bool {
    score < floor
        || (words.above_usual < ABOVE_USUAL && words.cosine < CHANCE_COSINE)
        || words.cosine < KNOWN_COSINE * (words.popularity - 1.0)
}

/// The score under which an entry is weak, given the best of the note's entries (hubs aside):
/// the highest of [`WEAK_BELOW`] that it reaches, else none. The floors are obsidian-help's
/// scale, where most of a score is the vault's links (a whole entry's links, folders and
/// popularity weigh 1.23 in the median); a vault with few links or notes never reaches them
/// (example-vault's Sourdough starter → Reading list, whose "where its microbes come from
/// (flour, hands, bakery air)" is what the note asks, scores under 1.5), and its entries are
/// judged by rank alone. 20 of 1,074 obsidian-help notes have no entry at 1.5.
///
/// 1.5 was the one floor until the best part's cosine joined the evidence
/// ([`scholia_index::Evidence::part_similar`]): it raised the scores of notes found by their
/// words, and the whole entries per note went 4.03 -> 4.62, their share of the author's links
/// 0.332 -> 0.327 (obsidian-help en, de, fr, es, ja and vi, both draws). At 1.8 alone, 37 of 654
/// measured notes had no entry at the floor (9 at 1.5 before), and all their entries were whole
/// however little found them; with 1.5 under it, 3.94 entries per note are whole and 0.356 of them
/// the author's links.
pub(super) fn weak_floor(best: f32) -> f32 {
    WEAK_BELOW
        .into_iter()
        .find(|floor| best >= *floor)
        .unwrap_or(f32::NEG_INFINITY)
}

/// Whether the entry at `at` (0-based, among the new notes cited, best first) is named on one
/// line without passages: a note cited for how many notes link it and nothing else
/// ([`Tie::Linked`]), and past the first [`WHOLE_ENTRIES`] one scoring under [`BRIEF_BELOW`]
/// of the best (`share`) with a word (`shown`) or tie to show on that line; never one the note
/// names. On obsidian-help's 34 languages (both draws of `benches/related.rs`), 0.12 of the
/// latter were links the author had made, against 0.31 of the others: they are the chance
/// finds, and a reader read two passages of each.
///
/// So, from entry [`TOLD_FROM`] on, is one found by its words that no passage explains
/// (`told`; its words shown, its opening quoted instead): at the fourth and fifth entries,
/// 0.20 and 0.17 of those were the author's links, against 0.26 and 0.20 of those a passage
/// explained, and 0.48 at the first (stop 58's code, both draws, 34 languages).
///
/// And so is one found by its words that is `weak` ([`weak`]: it scores under [`weak_floor`], or
/// its words are the vault's chance words), wherever it ranks: the first entries of a note with nothing closely related were shown whole however
/// little found them (de Ansichten → Suchen by "Gruppierung, Ergebnisse, Basis, Priorität";
/// Financial contributions → Sync your notes across devices by "consider, paid, development,
/// best"). On obsidian-help ar, vi, ja, en and de (both draws), 0.12 of the whole entries found
/// by words scoring under 1.4 were the author's links, as many as of the brief ones (0.12);
/// 0.20 from 1.4 to 1.6, 0.41 from 2 to 2.5. Under 1.5, 0.68 entries per note move to the brief
/// line (0.14 of them the author's links): the whole ones go from 4.91 to 4.23 per note and
/// their share of the author's links from 0.298 to 0.324.
///
/// And so, after the first entry, is one whose only tie is its folder ([`Tie::Folder`]), and from
/// entry [`TOLD_FROM`] on one tied by the links around the note ([`placed_by_links`]): its
/// passage is the note's opening, which says what it is, not what it has to do with this
/// one (de Tag-Übersicht → Graph-Ansicht, Tägliche Notizen, Importprogramm für Markdown
/// Format, each "in Erweiterungen/, wie 2 Notizen, die diese Notiz verlinkt"). On
/// obsidian-help's 34 languages (both draws), 0.110 of the whole entries tied by their folder
/// were the author's links (0.10 from the second entry on; 0.17 at the first, kept whole so
/// that a section of a vault with few links does not open with "less closely related"), and from
/// the fourth entry 0.143 of those tied by what the folder's notes link, 0.114 by the folder of
/// the notes it links and 0.143 by a note it links: the brief line's 0.134, against 0.242 of
/// those found by their words there. At the first three entries they fare better (in the same
/// order 0.25, 0.24 and 0.37; words 0.38). Whole entries per note went 4.30 -> 4.01 and their share of the
/// author's links 0.318 -> 0.333 (`cargo bench --bench related -- --all`, "of entries shown
/// whole"); the notes cited, and so recall, are unchanged in every language. A note the
/// researched one names keeps its entry, and so does one sharing its tag, which no figure
/// measured (obsidian-help has few).
pub(super) fn brief(at: usize, weak: bool, share: f32, named: bool, tie: &Tie, shown: bool, told: bool) -> bool {
    let why = *tie != Tie::Words || shown;
    let untold = at >= TOLD_FROM && *tie == Tie::Words && shown && !told;
    let weak = weak && *tie == Tie::Words && shown;
    let placed = (at > 0 && matches!(tie, Tie::Folder { .. })) || (at >= TOLD_FROM && placed_by_links(tie));
    !named
        && (matches!(tie, Tie::Linked { .. })
            || (at >= WHOLE_ENTRIES && share < BRIEF_BELOW && why)
            || untold
            || weak
            || placed)
}

/// A tie read from the links around the note, not from anything the two notes say.
fn placed_by_links(tie: &Tie) -> bool {
    matches!(
        tie,
        Tie::LinkedFrom { .. }
            | Tie::CitedWith { .. }
            | Tie::AlikeLinks { .. }
            | Tie::FolderLinks { .. }
            | Tie::LinksInto { .. }
    )
}

/// The brief entries of a section, as its one line names them: those found by the same tie
/// (the same folder, the same linking note) together, where the first of them was, so that
/// the reason is said once ("[[Graph view]], [[Daily notes]], [[Bookmarks]] (in Plugins/, like
/// 2 notes this note links)", not three times); one found by its words on its own, with them.
pub(super) fn brief_line(notes: &[&RelatedNote]) -> Vec<Value> {
    let mut groups: Vec<(&RelatedNote, Vec<&str>)> = Vec::new();
    for n in notes.iter().filter(|n| n.brief) {
        let same = groups
            .iter()
            .position(|(first, _)| n.tie != Tie::Words && first.tie == n.tie && first.tie_target == n.tie_target);
        match same {
            Some(at) => groups[at].1.push(&n.target),
            None => groups.push((n, vec![&n.target])),
        }
    }
    groups
        .into_iter()
        .map(|(first, targets)| {
            json!({"targets": targets, "tie": first.tie, "tie_target": first.tie_target, "terms": first.terms})
        })
        .collect()
}
