/// The words shown beside a note found by its words: the heaviest four it can show, a
/// common one left out when another is shown, never a lighter one in its place.
#[test]
fn common_words_give_way_to_the_others_shown() {
    let surface = super::Surface::of("Feed the starter rye flour and water every day; press Cmd to save.");
    let check = |shared: &[&str], common: &[&str], expected: &[&str]| {
        let shared: Vec<String> = shared.iter().map(|s| s.to_string()).collect();
        let mut generic = |w: &str| common.contains(&w.to_lowercase().as_str());
        let shown = super::shared_words(&surface, &shared, "", &mut generic);
        assert_eq!(shown, expected, "{shared:?}, common {common:?}");
    };
    check(&["rye", "water", "day"], &["water", "day"], &["rye"]);
    // Only common words: shown, something being better than nothing.
    check(&["water", "day"], &["water", "day"], &["water", "day"]);
    // The fifth heaviest (`cmd`) does not take a common word's place.
    check(
        &["water", "day", "rye", "flour", "cmd"],
        &["water", "day"],
        &["rye", "flour"],
    );
    check(&[], &[], &[] as &[&str]);
}

#[test]
fn an_entry_is_brief_past_the_first_five_when_it_scores_well_below_the_best_or_past_three_untold() {
    use scholia_index::Tie;
    // (position, share of the best score, named in the note, tie, words shown, a passage tells
    // why) -> brief; its score well above the floor.
    let check = |at: usize, share: f32, named: bool, tie: Tie, shown: bool, told: bool, want: bool| {
        assert_eq!(
            super::brief(at, false, share, named, &tie, shown, told),
            want,
            "{at} {share} {named} {tie:?} {shown} {told}"
        );
    };
    let folder = || Tie::Folder { folder: "F".into() };
    check(0, 0.2, false, Tie::Words, true, true, false);
    check(4, 0.1, false, folder(), false, false, true);
    check(5, 0.69, false, Tie::Words, true, true, true);
    check(5, 0.69, false, folder(), false, false, true);
    check(5, 0.7, false, Tie::Words, true, true, false);
    check(9, 0.3, true, Tie::Words, true, true, false);
    // Nothing to show on the line: its passages say why.
    check(9, 0.3, false, Tie::Words, false, true, false);
    // No score at all (NaN: nothing scored): nothing is below.
    check(7, f32::NAN, false, Tie::Words, true, true, false);
    // Cited for how many notes link it, wherever it ranks, unless the note names it.
    check(0, 1.0, false, Tie::Linked { linking: 8 }, false, false, true);
    check(0, 1.0, true, Tie::Linked { linking: 8 }, false, false, false);
    // Found by its words, no passage telling why: brief from the fourth entry, whatever its
    // score; not before, not when the note names it, not with no word to show on the line.
    check(2, 1.0, false, Tie::Words, true, false, false);
    check(3, 1.0, false, Tie::Words, true, false, true);
    check(3, 1.0, false, Tie::Words, true, true, false);
    check(3, 1.0, true, Tie::Words, true, false, false);
    check(3, 1.0, false, Tie::Words, false, false, false);
    // Tied by its folder alone: brief after the first entry, unless the note names it.
    check(0, 1.0, false, folder(), false, false, false);
    check(1, 1.0, false, folder(), false, false, true);
    check(1, 1.0, true, folder(), false, false, false);
    // Tied by the links around the note: whole in the first three, brief from the fourth.
    let into = || Tie::LinksInto {
        folder: "F".into(),
        linked: 2,
    };
    let mates = || Tie::FolderLinks {
        folder: "F".into(),
        linking: 3,
        mates: 9,
    };
    let via = || Tie::LinkedFrom { via: "V".into() };
    for tie in [into(), mates(), via()] {
        check(2, 1.0, false, tie.clone(), false, false, false);
        check(3, 1.0, false, tie.clone(), false, false, true);
        check(3, 1.0, true, tie, false, false, false);
    }
    // A tag's tie is not measured: whole in the first five.
    check(4, 1.0, false, Tie::Tag { tag: "t".into() }, false, false, false);
}

#[test]
fn an_entry_found_by_its_words_is_brief_wherever_it_ranks_when_little_found_it() {
    use scholia_index::Tie;
    // (score, best of the note's entries, named in the note, tie, words shown) -> brief; the
    // second entry, told.
    let check = |score: f32, best: f32, named: bool, tie: Tie, shown: bool, want: bool| {
        let weak = score < super::weak_floor(best);
        assert_eq!(
            super::brief(1, weak, 1.0, named, &tie, shown, true),
            want,
            "{score} of {best} {named} {tie:?} {shown}"
        );
    };
    let folder = || Tie::Folder { folder: "F".into() };
    check(1.79, 2.0, false, Tie::Words, true, true);
    check(1.8, 2.0, false, Tie::Words, true, false);
    // The lower floor when the best reaches only it.
    check(1.49, 1.7, false, Tie::Words, true, true);
    check(1.5, 1.7, false, Tie::Words, true, false);
    check(1.49, 1.8, false, Tie::Words, true, true);
    // A vault whose entries never reach a floor (few links): by rank alone.
    check(0.8, 1.49, false, Tie::Words, true, false);
    check(1.49, 1.49, false, Tie::Words, true, false);
    // A tie says why on its own (a folder's is brief for itself: see above).
    check(
        0.8,
        2.0,
        false,
        Tie::LinksInto {
            folder: "F".into(),
            linked: 2,
        },
        false,
        false,
    );
    check(0.8, 2.0, false, folder(), false, true);
    // Named by the note: whole.
    check(0.8, 2.0, true, Tie::Words, true, false);
    // Nothing to show on the line: its passages say why.
    check(0.8, 2.0, false, Tie::Words, false, false);
    check(f32::NAN, 2.0, false, Tie::Words, true, false);
    check(1.0, f32::NAN, false, Tie::Words, true, false);
}

#[test]
fn brief_entries_found_by_one_tie_are_named_together_where_the_first_was() {
    use scholia_index::Tie;
    let note = |target: &str, tie: Tie, tie_target: Option<&str>, terms: &[&str], brief: bool| super::RelatedNote {
        path: format!("{target}.md"),
        title: target.into(),
        target: target.into(),
        terms: terms.iter().map(|t| t.to_string()).collect(),
        passages: Vec::new(),
        score: 1.0,
        links_back: false,
        mentioned_on: None,
        tie,
        tie_target: tie_target.map(str::to_string),
        brief,
        told: false,
        words: scholia_index::WordsShare {
            cosine: 1.0,
            above_usual: f32::INFINITY,
            popularity: 0.0,
        },
    };
    let plugins = || Tie::LinksInto {
        folder: "Plugins".into(),
        linked: 2,
    };
    let via = |v: &str| Tie::LinkedFrom { via: v.into() };
    let notes = [
        note("Whole", plugins(), None, &[], false),
        note("Audio", Tie::Words, None, &["audio"], true),
        note("Graph", plugins(), None, &[], true),
        note("Canvas", Tie::Words, None, &["color"], true),
        note("Daily", plugins(), None, &[], true),
        note("A", via("Ribbon"), Some("Ribbon"), &[], true),
        note("B", via("Sidebar"), Some("Sidebar"), &[], true),
        note("C", via("Ribbon"), Some("Ribbon"), &[], true),
        note("Sync", Tie::Words, None, &["audio"], true),
        note(
            "Bookmarks",
            Tie::LinksInto {
                folder: "Plugins".into(),
                linked: 3,
            },
            None,
            &[],
            true,
        ),
    ];
    let line = super::brief_line(&notes.iter().collect::<Vec<_>>());
    let groups: Vec<(Vec<&str>, &str)> = line
        .iter()
        .map(|g| {
            let targets = g["targets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            (targets, g["tie"]["kind"].as_str().unwrap())
        })
        .collect();
    // Notes found by their words stand alone, even with the same words; a tie groups only
    // what it says alike (2 notes linked into Plugins/, not 3; the same linking note).
    let want: Vec<(Vec<&str>, &str)> = vec![
        (vec!["Audio"], "words"),
        (vec!["Graph", "Daily"], "links_into"),
        (vec!["Canvas"], "words"),
        (vec!["A", "C"], "linked_from"),
        (vec!["B"], "linked_from"),
        (vec!["Sync"], "words"),
        (vec!["Bookmarks"], "links_into"),
    ];
    assert_eq!(groups, want);
    assert_eq!(line[3]["tie_target"], "Ribbon");
    assert_eq!(line[0]["terms"], serde_json::json!(["audio"]));
}

#[test]
fn an_entry_whose_words_are_the_vaults_chance_words_is_brief_wherever_it_ranks() {
    use scholia_index::{Tie, WordsShare};
    // (at, its words' cosine, over the usual, tie, words shown) -> brief; a score above every
    // floor.
    let check = |at: usize, cosine: f32, above_usual: f32, tie: Tie, shown: bool, want: bool| {
        let words = WordsShare {
            cosine,
            above_usual,
            popularity: 0.0,
        };
        let weak = super::weak(2.5, super::weak_floor(3.0), words);
        assert_eq!(
            super::brief(at, weak, 1.0, false, &tie, shown, true),
            want,
            "{at} {cosine} {above_usual} {tie:?} {shown}"
        );
    };
    check(0, 0.15, 2.49, Tie::Words, true, true);
    check(2, 0.15, 2.49, Tie::Words, true, true);
    check(0, 0.15, 2.5, Tie::Words, true, false);
    // A long note's usual is high: a cosine of its subject's notes is not chance.
    check(0, 0.16, 1.8, Tie::Words, true, false);
    // Too few notes share a stem to tell the usual.
    check(0, 0.05, f32::INFINITY, Tie::Words, true, false);
    // Nothing to show on the line, or a tie that says why: whole.
    check(0, 0.05, 1.0, Tie::Words, false, false);
    check(0, 0.05, 1.0, Tie::Tag { tag: "t".into() }, false, false);
}

#[test]
fn a_note_many_link_is_whole_only_when_its_words_share_more_the_more_notes_link_it() {
    use scholia_index::{Tie, WordsShare};
    // (its words' cosine, the notes linking it) -> weak; words above the usual, a score above
    // every floor.
    let check = |cosine: f32, linking: usize, want: bool| {
        let words = WordsShare {
            cosine,
            above_usual: 10.0,
            popularity: (1.0 + linking as f32).ln(),
        };
        let weak = super::weak(2.5, super::weak_floor(3.0), words);
        assert_eq!(weak, want, "{cosine} {linking}");
        assert_eq!(super::brief(0, weak, 1.0, false, &Tie::Words, true, true), want);
    };
    // Settings, linked from 65 notes, by a cosine that would show another note whole.
    check(0.25, 65, true);
    check(0.33, 65, false);
    // Linked from ten: its bound is 0.14.
    check(0.13, 10, true);
    check(0.15, 10, false);
    // Linked from one note, any words will do; from two, a cosine of 0.01.
    check(0.001, 1, false);
    check(0.01, 2, false);
}
