//! Reading a section's one-line lists (the brief line, the hubs line) as a reader does.

/// The groups of a line of notes: the notes named together, and what found them (the text in
/// the brackets after them; a link in there is the tie's, not one of the notes). `[[A]], [[B]]
/// (in Plugins/, like 2 notes this note links); [[C]] (audio).` gives `(["A", "B"], "in
/// Plugins/, …")` and `(["C"], "audio")`; a note with nothing after it closes no group.
pub fn groups(line: &str) -> Vec<(Vec<String>, String)> {
    let (mut out, mut targets, mut why) = (Vec::new(), Vec::new(), String::new());
    let mut depth = 0usize;
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if let Some(link) = rest.strip_prefix("[[") {
            let (target, after) = link.split_once("]]").unwrap_or((link, ""));
            match depth {
                0 => targets.push(target.to_string()),
                _ => why.push_str(&format!("[[{target}]]")),
            }
            rest = after;
            continue;
        }
        match c {
            '(' | '（' => {
                if depth > 0 {
                    why.push(c);
                }
                depth += 1;
            }
            ')' | '）' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push((
                        std::mem::take(&mut targets),
                        std::mem::take(&mut why).trim().to_string(),
                    ));
                } else {
                    why.push(c);
                }
            }
            _ if depth > 0 => why.push(c),
            _ => {}
        }
        rest = &rest[c.len_utf8()..];
    }
    if !targets.is_empty() {
        out.push((targets, String::new()));
    }
    out
}

#[test]
fn groups_of_a_line() {
    let check = |line: &str, want: &[(&[&str], &str)]| {
        let want: Vec<(Vec<String>, String)> = want
            .iter()
            .map(|(t, w)| (t.iter().map(|t| t.to_string()).collect(), w.to_string()))
            .collect();
        assert_eq!(groups(line), want, "{line}");
    };
    check(
        "- Less closely related: [[A]], [[B (2)]] (in P/, like 2 notes); [[C]] (linked from [[V (x)]], which this note links).",
        &[
            (&["A", "B (2)"], "in P/, like 2 notes"),
            (&["C"], "linked from [[V (x)]], which this note links"),
        ],
    );
    check(
        "- Hubs of this vault, linked from many notes: [[Settings]] (65), [[Core plugins]] (35).",
        &[(&["Settings"], "65"), (&["Core plugins"], "35")],
    );
    check(
        "- 関連がやや薄いノート：[[甲]]、[[乙]]（同じタグ）；[[丙]]（語）。",
        &[(&["甲", "乙"], "同じタグ"), (&["丙"], "語")],
    );
    check("- [[Mute]] and [[Also]]", &[(&["Mute", "Also"], "")]);
}
