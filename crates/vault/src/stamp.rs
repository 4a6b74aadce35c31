//! The marker comment research leaves as the first line of `## Research`: which run wrote it,
//! when, how, from how many sources, and a hash of the note's text above the section then —
//! so an editor can say when the research was made and whether the note changed since.
//!
//! `<!-- scholia:research run=9f2c… at=2026-11-25 depth=deep model=llama3.1:8b sources=7 above=5e1d… -->`

/// The `## Research` section every pipeline writes into.
pub const SECTION: &str = "Research";
pub const SECTION_LEVEL: u8 = 2;
/// First line of a `### <question>` subsection written by deep search or Ask: research_note
/// keeps such subsections when it replaces its own part of the section.
pub const QUESTION_MARKER: &str = "<!-- scholia:question -->";
/// First line of a sources-only section (research whose synthesis failed): the only research
/// a later sources-only section may replace.
pub const SOURCES_ONLY_MARKER: &str = "<!-- scholia:sources-only -->";
/// The line that ends scholia's part of `## Research`, which the marker begins
/// (see `research_part.rs`).
pub const END_MARKER: &str = "<!-- /scholia:research -->";

const PREFIX: &str = "<!-- scholia:research ";
const SUFFIX: &str = " -->";
/// Stands for a hash until the part's place in the note is known (same width).
pub(crate) const UNHASHED: &str = "0000000000000000";

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResearchStamp {
    /// The run's id: its provenance record in the data directory.
    pub run: String,
    /// The day (UTC) it was written, `2026-11-25`: the record keeps the minute, and the same
    /// vault researched twice in a day gives the same section.
    pub at: String,
    /// `shallow`, `deep` or `offline`.
    pub depth: String,
    /// The model, or `none`.
    pub model: String,
    pub sources: usize,
    /// [`hash`] of the note's text above the section when it was written.
    pub above: String,
    /// The fingerprint of the part's words when it was written
    /// ([`crate::research_part::words_of`]); empty for a part written before it was kept.
    pub words: String,
}

impl ResearchStamp {
    /// The marker line with [`UNHASHED`] for the hash.
    pub(crate) fn marker(&self) -> String {
        format!(
            "{PREFIX}run={} at={} depth={} model={} sources={} above={UNHASHED} words={UNHASHED}{SUFFIX}",
            token(&self.run),
            token(&self.at),
            token(&self.depth),
            token(&self.model),
            self.sources
        )
    }

    /// Reads a marker line.
    pub fn parse(line: &str) -> Option<ResearchStamp> {
        let inner = line.trim().strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
        let mut s = ResearchStamp::default();
        for pair in inner.split_whitespace() {
            let (k, v) = pair.split_once('=')?;
            match k {
                "run" => s.run = v.to_string(),
                "at" => s.at = v.to_string(),
                "depth" => s.depth = v.to_string(),
                "model" => s.model = v.to_string(),
                "sources" => s.sources = v.parse().ok()?,
                "above" => s.above = v.to_string(),
                "words" => s.words = v.to_string(),
                _ => {}
            }
        }
        Some(s)
    }

    /// Whether the text above the section changed since the stamp was written.
    pub fn stale(&self, text: &str, section_start: usize) -> bool {
        hash(&text[..section_start]) != self.above
    }
}

/// A value as the marker carries it: no spaces, no `-->`, bounded.
fn token(v: &str) -> String {
    let t: String = v
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '_' | '/' | '+' | '@' | '-'))
        .take(80)
        .collect();
    // No `--` inside a comment (`-->` cannot form: `>` is gone).
    let mut t = t;
    while t.contains("--") {
        t = t.replace("--", "-");
    }
    if t.is_empty() { "none".into() } else { t }
}

/// FNV-1a (64 bits) of `text` with line endings as `\n`, in hex: stable across builds.
pub fn hash(text: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    let mut prev_cr = false;
    for &b in text.as_bytes() {
        // `\r\n` and a lone `\r` count as `\n`: an editor converting line endings is no change.
        let b = match (b, prev_cr) {
            (b'\n', true) => {
                prev_cr = false;
                continue;
            }
            (b'\r', _) => {
                prev_cr = true;
                b'\n'
            }
            (b, _) => {
                prev_cr = false;
                b
            }
        };
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// `body` without a research marker line (what the section says, as a reader sees it).
pub fn unmarked(body: &str) -> String {
    body.lines()
        .filter(|l| ResearchStamp::parse(l).is_none() && l.trim() != END_MARKER)
        .map(|l| format!("{l}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_round_trip_and_values_stay_inert() {
        let s = ResearchStamp {
            run: "r42".into(),
            at: "2026-11-25T10:04Z".into(),
            depth: "deep".into(),
            model: "evil --> <script> model".into(),
            sources: 7,
            above: String::new(),
            words: String::new(),
        };
        let line = s.marker();
        assert!(!line[4..line.len() - 3].contains("-->"), "{line}");
        let back = ResearchStamp::parse(&line).unwrap();
        assert_eq!(back.model, "evil-scriptmodel");
        assert_eq!(back.sources, 7);
        assert_eq!(back.above, UNHASHED);
        assert_eq!(ResearchStamp::parse("<!-- scholia:question -->"), None);
    }

    #[test]
    fn hashes_ignore_line_endings_only() {
        assert_eq!(hash("a\nb\n"), hash("a\r\nb\r\n"));
        assert_eq!(hash("a\nb\n"), hash("a\rb\r"));
        assert_ne!(hash("a\nb\n"), hash("a\nc\n"));
        assert_eq!(hash("").len(), 16);
    }
}
