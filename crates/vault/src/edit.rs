//! The one way a result reaches a note's `## Research`: a [`SectionEdit`], which can only be
//! made from text that passed the containment gate ([`crate::contain::check`]), so every
//! writer on every surface writes only contained text, into its own section, leaving every
//! other byte of the note as it was.

use std::path::PathBuf;

use crate::contain::{self, Links, Uncontained};
use crate::research_part;
use crate::section::SectionError;
use crate::stamp::{END_MARKER, ResearchStamp, SECTION, SECTION_LEVEL, SOURCES_ONLY_MARKER};

/// A note of the vault, resolved and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotePath {
    /// Vault-relative, `/`-separated.
    pub rel: String,
    pub abs: PathBuf,
}

impl NotePath {
    /// The vault's root: `abs` without the components of `rel`.
    pub fn vault_root(&self) -> PathBuf {
        let depth = self.rel.split('/').filter(|c| !c.is_empty()).count();
        self.abs.ancestors().nth(depth).map(PathBuf::from).unwrap_or_default()
    }
}

/// A change to a note's `## Research` section. It can only be made from text that passed the
/// containment check, so every writer, on every surface, writes only contained text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionEdit(Change);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    /// research_note's own part of the section; question subsections survive. A `fallback`
    /// (sources only) never replaces research that was not itself a fallback.
    Research {
        body: String,
        fallback: bool,
        stamp: Option<ResearchStamp>,
    },
    /// `### <heading>` under `## Research` (created when missing), replaced when it exists.
    Question { heading: String, body: String },
}

impl SectionEdit {
    /// research_note's part of `## Research`, linking only to `links`.
    pub fn research(body: impl Into<String>, links: &Links) -> Result<SectionEdit, Uncontained> {
        let body = contain::neutral_delimiters(&body.into());
        contain::check(SECTION, SECTION_LEVEL, &body, links)?;
        Ok(SectionEdit(Change::Research {
            body,
            fallback: false,
            stamp: None,
        }))
    }

    /// A sources-only section (synthesis failed): written where the note has no research yet
    /// or only an earlier sources-only section, else the note is left as it is.
    pub fn sources_only(body: impl Into<String>, links: &Links) -> Result<SectionEdit, Uncontained> {
        let body = contain::neutral_delimiters(&body.into());
        contain::check(SECTION, SECTION_LEVEL, &body, links)?;
        Ok(SectionEdit(Change::Research {
            body,
            fallback: true,
            stamp: None,
        }))
    }

    /// `### <heading>` under `## Research`, for deep search and Ask, linking only to `links`.
    pub fn question(heading: &str, body: impl Into<String>, links: &Links) -> Result<SectionEdit, Uncontained> {
        let body = contain::neutral_delimiters(&body.into());
        if heading.trim().is_empty() || heading.contains(['\n', '\r']) {
            return Err(Uncontained {
                section: format!("## {SECTION}"),
                reason: "have a heading that is not one line of text".into(),
            });
        }
        contain::check(heading, SECTION_LEVEL + 1, &body, links)?;
        Ok(SectionEdit(Change::Question {
            heading: heading.to_string(),
            body,
        }))
    }

    /// research_note's edit carrying its run's stamp (the section's first line; a no-op for
    /// questions).
    pub fn stamped(mut self, with: ResearchStamp) -> SectionEdit {
        if let Change::Research { stamp, .. } = &mut self.0 {
            *stamp = Some(with);
        }
        self
    }

    /// Whether this edit leaves `text` as it is because the note holds better research (a
    /// sources-only edit over a real section).
    pub fn keeps_better(&self, text: &str) -> bool {
        matches!(&self.0, Change::Research { fallback: true, .. }) && holds_better_research(text).unwrap_or(false)
    }

    /// The note's new text.
    pub fn apply(&self, text: &str) -> Result<String, SectionError> {
        match &self.0 {
            Change::Research { body, fallback, stamp } => {
                if *fallback && holds_better_research(text)? {
                    return Ok(text.to_string());
                }
                // scholia's part, between its marker and its end line: the one part of the
                // section a new run replaces.
                let marker = stamp.clone().unwrap_or_default().marker();
                let inner = match fallback {
                    true => format!("{SOURCES_ONLY_MARKER}\n{}", body.trim()),
                    false => body.trim().to_string(),
                };
                let part = format!("{marker}\n{inner}\n\n{END_MARKER}\n");
                Ok(research_part::seal(research_part::write(text, &part)?))
            }
            Change::Question { heading, body } => research_part::write_answer(text, heading, body),
        }
    }
}

/// Whether the note's `## Research` holds research of its own (scholia's part, not an
/// earlier sources-only one): what a sources-only section must not replace.
fn holds_better_research(text: &str) -> Result<bool, SectionError> {
    Ok(research_part::first_line(text)?
        .is_some_and(|l| !l.is_empty() && l != SOURCES_ONLY_MARKER && !l.starts_with("> [!warning] Sources only")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn research(body: &str) -> SectionEdit {
        SectionEdit::research(body, &Links::none()).unwrap()
    }

    fn question(h: &str, body: &str) -> SectionEdit {
        SectionEdit::question(h, body, &Links::none()).unwrap()
    }

    #[test]
    fn only_contained_text_makes_an_edit() {
        let none = Links::none();
        assert!(SectionEdit::research("## Escape\nx", &none).is_err());
        assert!(SectionEdit::research("<div>raw</div>", &none).is_err());
        assert!(SectionEdit::research("```\nopen", &none).is_err());
        assert!(SectionEdit::research("[a](https://a.example)", &none).is_err());
        assert!(SectionEdit::research("[a](https://a.example)", &Links::from_urls(["https://a.example"])).is_ok());
        assert!(SectionEdit::question("Q", "### Sibling that ends the question", &none).is_err());
        assert!(SectionEdit::question("Q\n## Research", "x", &none).is_err());
        assert!(SectionEdit::question("Q", "#### Deeper is fine", &none).is_ok());
    }

    #[test]
    fn sources_only_never_replaces_better_research() {
        let fallback = |body: &str| SectionEdit::sources_only(body, &Links::none()).unwrap();
        // No research yet: written.
        let a = fallback("> [!warning] Sources only: x\n\n- [[A]]")
            .apply("# N\n")
            .unwrap();
        assert!(a.contains(SOURCES_ONLY_MARKER) && a.contains("[[A]]"), "{a}");
        // Over an earlier fallback: replaced.
        let b = fallback("> [!warning] Sources only: y\n\n- [[B]]").apply(&a).unwrap();
        assert!(b.contains("[[B]]") && !b.contains("[[A]]"), "{b}");
        // Over real research: the note is kept as it is.
        let good = research("### Topic\n\nuseful findings").apply("# N\n").unwrap();
        assert_eq!(fallback("- [[C]]").apply(&good).unwrap(), good);
        // Over a section that only holds question subsections: written before them.
        let q = question("Why?", "answer").apply("# N\n").unwrap();
        let c = fallback("- [[C]]").apply(&q).unwrap();
        assert!(c.contains("[[C]]") && c.contains("### Why?"), "{c}");
        // An old fallback without the marker counts as a fallback.
        let old = "# N\n\n## Research\n\n> [!warning] Sources only: z\n\n- [[Z]]\n";
        assert!(fallback("- [[D]]").apply(old).unwrap().contains("[[D]]"));
    }

    #[test]
    fn research_keeps_question_subsections() {
        let note = "# N\n\ntext\n";
        let a = research("### Topic\n\nold findings").apply(note).unwrap();
        let b = question("Why?", "*Deep search*\n\nanswer").apply(&a).unwrap();
        let marker = ResearchStamp::of(&b).unwrap().0;
        assert_eq!(
            b,
            format!(
                "# N\n\ntext\n\n## Research\n\n<!-- scholia:research run=none at=none depth=none model=none sources=0 above={} words={} -->\n### Topic\n\nold findings\n\n{END_MARKER}\n\n### Why?\n\n<!-- scholia:question words={} -->\n*Deep search*\n\nanswer\n\n<!-- /scholia:question -->\n",
                marker.above,
                marker.words,
                research_part::words_of("*Deep search*\n\nanswer")
            )
        );
        let c = question("How?", "other").apply(&b).unwrap();
        // Research again: its own topics are replaced, both questions survive in order.
        let d = research("### New topic\n\nnew findings").apply(&c).unwrap();
        assert!(!d.contains("old findings"), "{d}");
        let at = |s: &str| d.find(s).unwrap_or_else(|| panic!("{s} missing from {d}"));
        assert!(at("new findings") < at("### Why?") && at("### Why?") < at("### How?"));
        // Idempotent, and a question re-run replaces only itself.
        assert_eq!(research("### New topic\n\nnew findings").apply(&d).unwrap(), d);
        let e = question("Why?", "second answer").apply(&d).unwrap();
        assert!(e.contains("second answer") && !e.contains("*Deep search*") && e.contains("new findings"));
        // The owner's own subsection under ## Research stays: the research goes before it.
        let f = research("x").apply("## Research\n\n### Mine\n\nmine\n").unwrap();
        let at = |s: &str| f.find(s).unwrap_or_else(|| panic!("{s} missing from {f}"));
        assert!(
            at("\nx\n") < at(END_MARKER) && at(END_MARKER) < at("### Mine\n\nmine\n"),
            "{f}"
        );
        assert_eq!(
            research("y").apply(&f).unwrap(),
            f.replace("\nx\n", "\ny\n").replace(
                &ResearchStamp::of(&f).unwrap().0.words,
                &ResearchStamp::of(&research("y").apply(&f).unwrap()).unwrap().0.words
            )
        );
    }

    /// A note that starts with a `---` never closed has no front matter; research whose answer
    /// holds a `---` rule, written twice, never closes it (which would hide the first section
    /// in "front matter" and make a second).
    #[test]
    fn written_rules_never_close_an_open_front_matter() {
        let note = "---\n# Trip\nPacking list.\n";
        let body = "### Topic\n\nfirst part\n\n---\n\nsecond part\n...\n";
        let once = research(body).apply(note).unwrap();
        assert!(crate::frontmatter::locate(&once).is_none(), "{once}");
        let twice = research(body).apply(&once).unwrap();
        assert_eq!(twice, once);
        let sections = crate::parse::headings(&twice)
            .iter()
            .filter(|h| h.top_level && h.text == "Research")
            .count();
        assert_eq!(sections, 1, "{twice}");
        assert!(twice.contains("\n***\n") && twice.contains("\\..."), "{twice}");
        let q = question("Why?", "a\n\n---\n\nb").apply(&twice).unwrap();
        assert!(crate::frontmatter::locate(&q).is_none(), "{q}");
    }
}
