//! What a research run read, kept beside the note rather than in it: per cited source the
//! passage the synthesis was given, and per `**Contradiction:**` line the line of the note it
//! disputes. An editor shows them on hover and as diagnostics; the note holds only the links.

use serde::{Deserialize, Serialize};

/// A topic research looked into: what the note names, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Topic {
    pub topic: String,
    #[serde(default)]
    pub context: String,
    #[serde(rename = "type", default)]
    pub kind: String,
}

/// The longest passage kept per source.
const PASSAGE_CHARS: usize = 800;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The researched note (vault-relative).
    pub note: String,
    /// When the run wrote it (UTC, `2026-11-25T10:04Z`), set as it is saved.
    #[serde(default)]
    pub at: String,
    pub sources: Vec<SourceRecord>,
    pub contradictions: Vec<ContradictionRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceRecord {
    pub title: String,
    /// Where it was read: a web page…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// …or a note of the vault (its path, and the link target the section uses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// What the synthesis was given of it.
    pub passage: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContradictionRecord {
    /// The contradiction as the section says it (without its `**Contradiction:**` label).
    pub summary: String,
    /// The line of the note that makes the claim, as it read then.
    pub claim: String,
    /// The source that disputes it: a URL or a note's link target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl SourceRecord {
    pub fn web(title: &str, url: &str, passage: &str) -> SourceRecord {
        SourceRecord {
            title: title.to_string(),
            url: Some(url.to_string()),
            note: None,
            target: None,
            passage: cut(passage),
        }
    }

    pub fn vault(title: &str, path: &str, target: &str, passage: &str) -> SourceRecord {
        SourceRecord {
            title: title.to_string(),
            url: None,
            note: Some(path.to_string()),
            target: Some(target.to_string()),
            passage: cut(passage),
        }
    }
}

fn cut(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(PASSAGE_CHARS) {
        None => text.to_string(),
        Some((i, _)) => format!("{}…", &text[..i]),
    }
}

const LABEL: &str = "**Contradiction:**";

/// The contradictions of `findings` (the synthesis as written), each with the line of the
/// note's own text (`own`) that makes the claim: the topic's context as the topic extraction
/// quoted it, matched to the note's lines by the words they share.
pub fn contradictions(findings: &str, topics: &[Topic], own: &str) -> Vec<ContradictionRecord> {
    let mut out = Vec::new();
    let mut heading = "";
    for line in findings.lines() {
        let t = line.trim();
        if let Some(h) = t.strip_prefix("### ") {
            heading = h.trim();
            continue;
        }
        let Some(rest) = t.strip_prefix(LABEL) else { continue };
        let summary = rest.trim().to_string();
        let topic = topics
            .iter()
            .find(|tp| tp.topic.trim().eq_ignore_ascii_case(heading))
            .or_else(|| topics.iter().max_by_key(|tp| shared(&tp.context, &summary)));
        let hint = match topic {
            Some(tp) => format!("{} {}", tp.context, tp.topic),
            None => summary.clone(),
        };
        let Some(claim) = best_line(own, &hint) else { continue };
        out.push(ContradictionRecord {
            summary,
            claim,
            source: first_link(rest),
        });
    }
    out
}

/// Lower-cased words of three letters or more (any script's letters).
fn words(text: &str) -> std::collections::HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect()
}

fn shared(a: &str, b: &str) -> usize {
    words(a).intersection(&words(b)).count()
}

/// The note's line sharing the most words with `hint` (at least two, or half of a short
/// line's): headings, blank lines and scholia's section left out.
fn best_line(own: &str, hint: &str) -> Option<String> {
    let wanted = words(hint);
    let mut best: Option<(usize, &str)> = None;
    for line in own.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with("<!--") || t == "---" {
            continue;
        }
        let mine = words(t);
        let n = mine.intersection(&wanted).count();
        let enough = n >= 2 || (n >= 1 && mine.len() <= 2);
        if enough && best.is_none_or(|(b, _)| n > b) {
            best = Some((n, t));
        }
    }
    best.map(|(_, l)| l.to_string())
}

/// The first link of a line: a Markdown link's URL or a wikilink's target.
fn first_link(line: &str) -> Option<String> {
    let md = line.find("](").map(|i| (i, &line[i + 2..]));
    let wiki = line.find("[[").map(|i| (i, &line[i + 2..]));
    match (md, wiki) {
        (Some((a, rest)), w) if w.is_none_or(|(b, _)| a < b) => rest.split(')').next().map(str::to_string),
        (_, Some((_, rest))) => rest
            .split(']')
            .next()
            .map(|t| t.split(['|', '#']).next().unwrap_or(t).trim().to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(t: &str, c: &str) -> Topic {
        Topic {
            topic: t.into(),
            context: c.into(),
            kind: "claim".into(),
        }
    }

    #[test]
    fn contradictions_find_the_line_that_makes_the_claim() {
        let own = "# Kombucha\n\n- Kombucha is fermented by a SCOBY.\n- It keeps for a year at room temperature.\n";
        let findings = "### Shelf life\n\nSources disagree.\n\n**Contradiction:** the note says a year; [USDA](https://usda.example/k) says weeks.\n\n### Other\n\nx\n";
        let topics = [
            topic("Shelf life", "keeps for a year at room temperature"),
            topic("Other", "SCOBY"),
        ];
        let found = contradictions(findings, &topics, own);
        assert_eq!(
            found,
            vec![ContradictionRecord {
                summary: "the note says a year; [USDA](https://usda.example/k) says weeks.".into(),
                claim: "- It keeps for a year at room temperature.".into(),
                source: Some("https://usda.example/k".into()),
            }]
        );
        // A line the note does not hold is not invented.
        assert!(contradictions(findings, &topics[..1], "# Other note\n\nNothing alike.\n").is_empty());
    }

    #[test]
    fn first_links() {
        assert_eq!(
            first_link("see [[Koji#x|k]] and [a](https://a.example)"),
            Some("Koji".into())
        );
        assert_eq!(
            first_link("[a](https://a.example) then [[Koji]]"),
            Some("https://a.example".into())
        );
        assert_eq!(first_link("no link"), None);
    }
}
