//! The one way a result reaches a note's `## Research`: a [`SectionEdit`], which can only be
//! made from text that passed the containment gate ([`crate::contain::check`]), so every
//! writer on every surface writes only contained text, into its own section, leaving every
//! other byte of the note as it was.

use std::path::PathBuf;

use crate::contain::{self, Links, Uncontained};
use crate::section::{self, SectionError};
use crate::stamp::ResearchStamp;

/// The `## Research` section every pipeline writes into.
pub const SECTION: &str = "Research";
pub const SECTION_LEVEL: u8 = 2;
/// First line of a `### <question>` subsection written by deep search or Ask: research_note
/// keeps such subsections when it replaces its own part of the section.
pub const QUESTION_MARKER: &str = "<!-- scholia:question -->";
/// First line of a sources-only section (research whose synthesis failed): the only research
/// a later sources-only section may replace.
pub const SOURCES_ONLY_MARKER: &str = "<!-- scholia:sources-only -->";

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
                let marker = stamp.as_ref().map(|s| format!("{}\n", s.marker())).unwrap_or_default();
                if !*fallback {
                    let body = format!("{marker}{}", body.trim_start());
                    let new = section::upsert_keeping(text, SECTION, SECTION_LEVEL, &body, &is_question)?;
                    return Ok(crate::stamp::seal(new));
                }
                if holds_better_research(text)? {
                    return Ok(text.to_string());
                }
                let marked = format!("{marker}{SOURCES_ONLY_MARKER}\n{}", body.trim_start());
                let new = section::upsert_keeping(text, SECTION, SECTION_LEVEL, &marked, &is_question)?;
                Ok(crate::stamp::seal(new))
            }
            Change::Question { heading, body } => {
                let marked = format!("{QUESTION_MARKER}\n{}", body.trim_start());
                section::upsert_subsection(text, SECTION, SECTION_LEVEL, heading, &marked)
            }
        }
    }
}

/// Whether the note's `## Research` holds research of its own (not only question subsections
/// or an earlier sources-only section): what a sources-only section must not replace.
fn holds_better_research(text: &str) -> Result<bool, SectionError> {
    let Some(body) = section::body(text, SECTION, SECTION_LEVEL)? else {
        return Ok(false);
    };
    // Its own part: what precedes the first question subsection.
    let own = match body.find(QUESTION_MARKER) {
        Some(i) => body[..i].rsplit_once("###").map_or("", |(before, _)| before),
        None => body,
    };
    let first = own
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && ResearchStamp::parse(l).is_none());
    Ok(match first {
        None => false,
        Some(l) => l != SOURCES_ONLY_MARKER && !l.starts_with("> [!warning] Sources only"),
    })
}

/// Whether a subsection (heading line first) was written by deep search or Ask.
fn is_question(sub: &str) -> bool {
    sub.lines()
        .skip(1)
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim() == QUESTION_MARKER)
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
        assert_eq!(
            b,
            "# N\n\ntext\n\n## Research\n\n### Topic\n\nold findings\n\n### Why?\n\n<!-- scholia:question -->\n*Deep search*\n\nanswer\n"
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
        // A user's own unmarked subsection under ## Research belongs to research (replaced).
        let f = research("x").apply("## Research\n\n### Mine\n\nmine\n").unwrap();
        assert_eq!(f, "## Research\n\nx\n");
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
