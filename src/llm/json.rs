//! Getting JSON out of model answers: `<think>` blocks removed, fenced blocks preferred, else
//! the outermost object or array.

/// Removes `<think>…</think>` blocks (an unclosed one runs to the end).
pub fn strip_think(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let Some(start) = find_ci(rest, "<think>") else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..start]);
        let after = &rest[start + "<think>".len()..];
        match find_ci(after, "</think>") {
            Some(end) => rest = &after[end + "</think>".len()..],
            None => break,
        }
    }
    out.trim().to_string()
}

fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    hay.to_ascii_lowercase().find(needle)
}

/// The JSON document in a model's answer, if any parses.
pub fn extract(text: &str) -> Option<serde_json::Value> {
    let text = strip_think(text);
    // Fenced blocks first: ```json … ``` (or any fence whose content parses).
    let mut rest = text.as_str();
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(after.len());
        let body = &after[body_start..];
        let Some(close) = body.find("```") else { break };
        if let Ok(v) = serde_json::from_str(body[..close].trim()) {
            return Some(v);
        }
        rest = &body[close + 3..];
    }
    if let Ok(v) = serde_json::from_str(text.trim()) {
        return Some(v);
    }
    // The outermost balanced object or array, scanning from each opening bracket.
    for (i, c) in text.char_indices() {
        if (c == '{' || c == '[')
            && let Some(end) = balanced_end(&text[i..])
            && let Ok(v) = serde_json::from_str(&text[i..i + end])
        {
            return Some(v);
        }
    }
    None
}

/// Length of the balanced JSON value starting at `s[0]` (`{` or `[`), honouring strings.
fn balanced_end(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
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
    }
}
