//! The marker comment research leaves as the first line of `## Research`: which run wrote it,
//! when, how, from how many sources, and a hash of the note's text above the section then —
//! so an editor can say when the research was made and whether the note changed since.
//!
//! `<!-- scholia:research run=9f2c… at=2026-11-25 depth=deep model=llama3.1:8b sources=7 above=5e1d… -->`

use crate::section;

const PREFIX: &str = "<!-- scholia:research ";
const SUFFIX: &str = " -->";
/// Stands for the hash until the section's place in the note is known (same width).
const UNHASHED: &str = "0000000000000000";

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
}

impl ResearchStamp {
    /// The marker line with [`UNHASHED`] for the hash.
    pub(crate) fn marker(&self) -> String {
        format!(
            "{PREFIX}run={} at={} depth={} model={} sources={} above={UNHASHED}{SUFFIX}",
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
                _ => {}
            }
        }
        Some(s)
    }

    /// The stamp of `text`'s `## Research`, with where its section starts.
    pub fn of(text: &str) -> Option<(ResearchStamp, usize)> {
        let range = section::find(text, crate::SECTION, crate::SECTION_LEVEL).ok()??;
        let body = &text[range.clone()];
        let stamp = body.lines().skip(1).take(4).find_map(ResearchStamp::parse)?;
        Some((stamp, range.start))
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
        .filter(|l| ResearchStamp::parse(l).is_none())
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Fills the marker's hash in `new`: the hash of what precedes the section there.
pub(crate) fn seal(new: String) -> String {
    let Some((_, start)) = ResearchStamp::of(&new) else {
        return new;
    };
    let Some(at) = new[start..].find(&format!("above={UNHASHED}")) else {
        return new;
    };
    let at = start + at + "above=".len();
    let digest = hash(&new[..start]);
    let mut out = new;
    out.replace_range(at..at + UNHASHED.len(), &digest);
    out
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

    #[test]
    fn a_stamped_section_knows_when_the_note_changed() {
        use crate::{SectionEdit, contain::Links};
        let stamp = ResearchStamp {
            run: "r1".into(),
            at: "2026-11-25T10:04Z".into(),
            depth: "shallow".into(),
            model: "m".into(),
            sources: 2,
            above: String::new(),
        };
        let edit = SectionEdit::research("Findings.", &Links::none())
            .unwrap()
            .stamped(stamp);
        for note in [
            "# Koji\n\nRice.\n",
            "# Koji\r\n\r\nRice.\r\n\r\n## Research\r\n\r\nold\r\n\r\n## After\r\nx\r\n",
        ] {
            let written = edit.apply(note).unwrap();
            let (found, start) = ResearchStamp::of(&written).unwrap();
            assert_eq!((found.run.as_str(), found.sources), ("r1", 2), "{written:?}");
            assert!(!found.stale(&written, start), "{written:?}");
            assert!(written[start..].contains("Findings."), "{written:?}");
            // Re-running replaces the marker, never stacks a second one.
            let again = edit.apply(&written).unwrap();
            assert_eq!(again.matches("scholia:research").count(), 1, "{again:?}");
            // The owner edits the text above: stale; below the section: not.
            let edited = written.replacen("Rice.", "Rice and barley.", 1);
            let (s, at) = ResearchStamp::of(&edited).unwrap();
            assert!(s.stale(&edited, at));
            let below = format!("{written}More after.\n");
            let (s, at) = ResearchStamp::of(&below).unwrap();
            assert!(!s.stale(&below, at));
        }
    }
}
