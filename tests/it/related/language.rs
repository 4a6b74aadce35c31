//! The fixed sentences of a section, in the language the note is written in.

use super::research;
use crate::support::TestVault;

/// The section's fixed sentences are in the note's language: German detected from its words,
/// Japanese from its front matter, a note of names in the language of the notes beside it;
/// English otherwise.
#[tokio::test(flavor = "multi_thread")]
async fn fixed_sentences_in_the_note_s_language() {
    let v = TestVault::with_files(&[
        (
            "Sauerteig.md",
            "# Sauerteig\n\nDer Sauerteig ist eine Kultur aus Hefe und Milchsäurebakterien. Die Kultur wird mit Mehl und Wasser gefüttert, und das ist nicht schwer.\n",
        ),
        (
            "Roggen.md",
            "# Roggen\n\nRoggenmehl füttert die Kultur aus Hefe besonders gut, und die Milchsäurebakterien mögen es.\n",
        ),
        (
            "Koji.md",
            "---\nlang: ja\n---\n# Koji\n\nKoji grows on rice with Hefe and Kultur.\n",
        ),
        ("Segeln.md", "# Segeln\n\nSegeln auf dem See bei Wind.\n"),
        ("Sterne.md", "# Sterne\n\nSterne am Himmel in der Nacht.\n"),
        ("Garten.md", "# Garten\n\nTomaten im Garten gießen.\n"),
        ("Berge.md", "# Berge\n\nWandern in den Bergen im Sommer.\n"),
        // Names and licences only: its own words say no language.
        (
            "Credits.md",
            "# Credits\n\n[[Sauerteig]], [[Roggen]]: Apache-2.0, MIT, BSD-3-Clause — Hefe, Kultur.\n",
        ),
    ]);
    let (_, _, section) = research(&v, "Sauerteig.md").await;
    assert!(section.contains("Ohne Sprachmodell recherchiert"), "{section}");
    assert!(section.contains("[[Roggen]]"), "{section}");
    let intro = |section: &str| {
        section
            .lines()
            .find(|l| !l.is_empty() && !l.starts_with(['#', '<']))
            .unwrap()
            .to_string()
    };
    assert!(intro(&section).contains("Schlüsselbegriffe ("), "{section}");
    assert!(intro(&section).ends_with("Hefe)."), "{section}");
    let (_, _, section) = research(&v, "Credits.md").await;
    assert!(section.contains("Ohne Sprachmodell recherchiert"), "{section}");
    let (_, _, section) = research(&v, "Koji.md").await;
    assert!(section.contains("言語モデルなしで調査"), "{section}");
    // Japanese punctuation: （、）。 not ( , ). and no space after a colon.
    let line = intro(&section);
    assert!(line.contains("検出（") && line.ends_with("）。"), "{section}");
    assert!(!line.contains(", ") && !line.contains(" ("), "{section}");
    for entry in section.lines().filter(|l| l.starts_with("- [[")) {
        assert!(!entry.contains(", "), "{entry}\n{section}");
    }
}
