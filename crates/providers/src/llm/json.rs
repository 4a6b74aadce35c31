//! Getting JSON out of model answers: `<think>` blocks removed, fenced blocks preferred, else
//! the outermost object or array.

/// Removes `<think>…</think>` blocks (an unclosed one runs to the end). Linear: ASCII
/// lowercasing keeps byte offsets, so one lowercased copy is searched.
pub fn strip_think(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(start) = lower[at..].find("<think>").map(|i| at + i) {
        out.push_str(&text[at..start]);
        let after = start + "<think>".len();
        match lower[after..].find("</think>") {
            Some(end) => at = after + end + "</think>".len(),
            None => {
                at = text.len();
                break;
            }
        }
    }
    out.push_str(&text[at..]);
    out.trim().to_string()
}

/// Model answers are searched for JSON up to this many bytes.
const MAX_SCAN: usize = 4 << 20;
/// Candidate spans tried at most (each parse is linear in its span).
const MAX_ATTEMPTS: usize = 64;

/// The JSON document in a model's answer, if any parses. Linear in the answer: one pass finds
/// the balanced spans, and at most [`MAX_ATTEMPTS`] of them are parsed.
pub fn extract(text: &str) -> Option<serde_json::Value> {
    let text = strip_think(text);
    let mut cut = text.len().min(MAX_SCAN);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let text = &text[..cut];
    // Fenced blocks first (```json … ```, or any fence whose content parses), then the whole
    // answer, then balanced objects and arrays, earliest first.
    let mut candidates: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(after.len());
        let body = &after[body_start..];
        let Some(close) = body.find("```") else { break };
        candidates.push(&body[..close]);
        rest = &body[close + 3..];
    }
    candidates.push(text);
    candidates
        .into_iter()
        .chain(balanced_spans(text).into_iter().map(|r| &text[r]))
        .take(MAX_ATTEMPTS)
        .find_map(|c| serde_json::from_str(c.trim()).ok())
}

/// Every balanced `{…}` / `[…]` span of `s` (brackets in strings ignored), ordered by start and,
/// at one start, longest first. One pass with a stack of open brackets.
fn balanced_spans(s: &str) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let mut open: Vec<(usize, u8)> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for (i, b) in s.bytes().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            // Quotes only delimit strings inside a bracket: prose has stray ones.
            b'"' if !open.is_empty() => in_string = true,
            b'{' | b'[' => open.push((i, b)),
            b'}' | b']' => match open.pop() {
                Some((start, o)) if (o == b'{') == (b == b'}') => spans.push(start..i + 1),
                Some(_) => open.clear(),
                None => {}
            },
            _ => {}
        }
    }
    spans.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    spans
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn think_blocks() {
        assert_eq!(strip_think("<think>hmm</think>Answer"), "Answer");
        assert_eq!(strip_think("A <THINK>x</THINK> B <think>y</think>C"), "A  B C");
        assert_eq!(strip_think("<think>never closed"), "");
        assert_eq!(strip_think("plain"), "plain");
    }

    #[test]
    fn extraction() {
        let check = |text: &str, expected: Option<serde_json::Value>| assert_eq!(extract(text), expected, "{text:?}");
        check("{\"a\": 1}", Some(json!({"a": 1})));
        check("Here you go:\n```json\n[1, 2]\n```\nDone.", Some(json!([1, 2])));
        check("```\n{\"x\": \"y\"}\n```", Some(json!({"x": "y"})));
        check(
            "<think>{\"no\": 1}</think>Sure! {\"a\": \"}\"} trailing",
            Some(json!({"a": "}"})),
        );
        check(
            "Result: [ {\"t\": \"a\"}, {\"t\": \"b\"} ] hope that helps",
            Some(json!([{"t": "a"}, {"t": "b"}])),
        );
        check("```json\n{broken\n```\nthen {\"ok\": true}", Some(json!({"ok": true})));
        check("no json here", None);
        check("{\"unterminated\": ", None);
        check("[1, {\"a\": 2}] and more", Some(json!([1, {"a": 2}])));
    }

    #[test]
    fn hostile_answers_stay_linear() {
        for text in ["{".repeat(2 << 20), "{\"a\":".repeat(300_000), "[{]".repeat(500_000)] {
            let started = std::time::Instant::now();
            assert_eq!(extract(&text), None);
            assert!(
                started.elapsed() < std::time::Duration::from_secs(2),
                "{:?}",
                started.elapsed()
            );
        }
    }
}
