//! Search: words found with or without marks, and whose words research reads.

/// A note written with Arabic vowel marks is found by a query without them, and the other
/// way round (the tokenizer leaves the marks out of both).
#[test]
fn arabic_words_are_found_with_or_without_vowel_marks() {
    let f = crate::fixture::vault(&[
        ("marked.md", "# مكوّن\n\nاستخدم مكوّن الاستيراد أيضًا."),
        ("plain.md", "# ملف\n\nافتح الملف من القائمة."),
    ]);
    let paths = |q: &str| -> Vec<String> {
        f.index
            .search(q, 5, None)
            .unwrap()
            .into_iter()
            .map(|h| h.path)
            .collect()
    };
    assert_eq!(paths("مكون"), ["marked.md"]);
    assert_eq!(paths("أيضا"), ["marked.md"]);
    assert_eq!(paths("الملفّ"), ["plain.md"]);
}

/// A person's search finds what scholia wrote in a `## Research` section, below the
/// owner's words; research's own search reads the owner's words alone, snippets included,
/// so a note is not found or quoted for another run's section (issue 39).
#[test]
fn research_reads_the_owner_s_words_alone() {
    let f = crate::fixture::vault(&[
        (
            "Tea.md",
            "# Tea

Green tea steeps in water.
",
        ),
        (
            "Bread.md",
            &format!(
                "# Bread\n\nFlour, water, salt and kombucha.\n\n{}",
                crate::fixture::researched("Kombucha kombucha kombucha SCOBY.")
            ),
        ),
        (
            "Yeast.md",
            &format!(
                "# Yeast\n\nA fungus.\n\n{}",
                crate::fixture::researched("- [[Kombucha]]: a SCOBY is yeast and bacteria.")
            ),
        ),
    ]);
    let found =
        |hits: Vec<super::Hit>| -> Vec<(String, String)> { hits.into_iter().map(|h| (h.path, h.snippet)).collect() };
    let all = found(f.index.search("scoby", 5, None).unwrap());
    assert_eq!(
        all.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(),
        ["Bread.md", "Yeast.md"]
    );
    assert!(found(f.index.search_owned("scoby", 5, None).unwrap()).is_empty());
    let owned = found(f.index.search_owned("kombucha", 5, None).unwrap());
    assert_eq!(owned.len(), 1, "{owned:?}");
    assert_eq!(owned[0].0, "Bread.md");
    assert!(!owned[0].1.contains("SCOBY"), "{owned:?}");
}
