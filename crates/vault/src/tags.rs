//! Where a note's tags are written: inline `#tag`s (outside code, as [`crate::parse`] finds
//! them) and the values of the front matter's `tags:` (or `tag:`) key, in its three spellings
//! (`tags: [a, b]`, `tags: a, b`, and a `- a` list), each with the bytes of its name. Tags
//! compare without case, as Obsidian's do; `a` contains `a/b`.

use std::ops::Range;

/// One written tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagSpan {
    /// As written, without `#`.
    pub tag: String,
    /// The bytes of the name (without `#`).
    pub range: Range<usize>,
    pub in_front_matter: bool,
}

/// A tag as compared: lower-cased, without `#` and surrounding `/`.
pub fn key(tag: &str) -> String {
    tag.trim().trim_start_matches('#').trim_matches('/').to_lowercase()
}

/// Whether `tag` is `wanted` or nested under it (`project/alpha` under `project`).
pub fn within(tag: &str, wanted: &str) -> bool {
    let (t, w) = (key(tag), key(wanted));
    !w.is_empty() && (t == w || t.starts_with(&format!("{w}/")))
}

/// `tag` renamed from `from` to `to` (its nested part kept), when it is `from` or under it.
pub fn renamed(tag: &str, from: &str, to: &str) -> Option<String> {
    within(tag, from).then(|| {
        let depth = key(from).len();
        format!(
            "{}{}",
            to.trim().trim_start_matches('#').trim_matches('/'),
            &tag[depth.min(tag.len())..]
        )
    })
}

/// A name a tag may take: letters, digits, `_`, `-` and `/`, not only digits.
pub fn check(field: &str, tag: &str) -> Result<String, String> {
    let t = tag.trim().trim_start_matches('#').trim_matches('/');
    let ok = !t.is_empty()
        && t.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'))
        && !t.chars().all(|c| c.is_ascii_digit())
        && !t.contains("//");
    match ok {
        true => Ok(t.to_string()),
        false => Err(format!(
            "{field}: `{tag}` is not a tag; valid: letters, digits, `_`, `-` and `/` (not only digits), e.g. `project/alpha`"
        )),
    }
}

/// Every tag written in `text`, in order.
pub fn spans(text: &str) -> Vec<TagSpan> {
    let mut out = front_matter(text);
    let parsed = crate::parse::parse(text, "");
    out.extend(parsed.tag_spans.into_iter().map(|(tag, range)| TagSpan {
        tag,
        range,
        in_front_matter: false,
    }));
    out
}

/// The values of the front matter's `tags:`/`tag:` key, where they are written.
fn front_matter(text: &str) -> Vec<TagSpan> {
    let Some((_, inner, true)) = crate::frontmatter::locate(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut in_list = false;
    let mut at = inner.start;
    for line in text[inner.clone()].split_inclusive('\n') {
        let start = at;
        at += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let top_level = !body.starts_with([' ', '\t']) && !body.starts_with('-');
        if top_level {
            in_list = false;
            let Some((k, rest)) = body.split_once(':') else {
                continue;
            };
            if !matches!(k.trim(), "tags" | "tag") {
                continue;
            }
            let value_at = start + k.len() + 1;
            let v = rest.trim();
            if v.is_empty() {
                in_list = true;
                continue;
            }
            let (inner_v, offset) = match v.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
                Some(x) => (x, rest.find('[').unwrap_or(0) + 1),
                None => (v, rest.len() - rest.trim_start().len()),
            };
            let mut pos = value_at + offset;
            for part in inner_v.split(',') {
                push_value(text, pos, part, &mut out);
                pos += part.len() + 1;
            }
        } else if in_list {
            let trimmed = body.trim_start();
            let Some(item) = trimmed.strip_prefix('-') else {
                if !trimmed.is_empty() && !trimmed.starts_with('#') {
                    in_list = false;
                }
                continue;
            };
            let pos = start + (body.len() - trimmed.len()) + 1;
            push_value(text, pos, item, &mut out);
        }
    }
    out
}

/// One value of `tags:` starting at byte `at` of `text` (`raw` as written there): its name's
/// bytes, quotes and `#` left out.
fn push_value(text: &str, at: usize, raw: &str, out: &mut Vec<TagSpan>) {
    let lead = raw.len() - raw.trim_start().len();
    let mut v = raw.trim();
    let mut start = at + lead;
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            v = &v[1..v.len() - 1];
            start += 1;
        }
    }
    if let Some(rest) = v.strip_prefix('#') {
        v = rest;
        start += 1;
    }
    if v.is_empty() || text.get(start..start + v.len()) != Some(v) {
        return;
    }
    out.push(TagSpan {
        tag: v.to_string(),
        range: start..start + v.len(),
        in_front_matter: true,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_spans(text: &str, expected: &[(&str, bool)]) {
        let found = spans(text);
        for s in &found {
            assert_eq!(&text[s.range.clone()], s.tag, "{text:?}: {s:?}");
        }
        let got: Vec<(&str, bool)> = found.iter().map(|s| (s.tag.as_str(), s.in_front_matter)).collect();
        assert_eq!(got, expected, "{text:?}");
    }

    #[test]
    fn tags_are_found_where_they_are_written() {
        check_spans(
            "Just #idea here and #project/alpha.\n",
            &[("idea", false), ("project/alpha", false)],
        );
        check_spans(
            "---\ntags: [idea, \"project/alpha\"]\n---\n# T\n",
            &[("idea", true), ("project/alpha", true)],
        );
        check_spans("---\ntags: idea, #work\n---\n", &[("idea", true), ("work", true)]);
        check_spans(
            "---\ntitle: x\ntags:\n  - idea\n  - 'work'\naliases: [a]\n---\nBody #more\n",
            &[("idea", true), ("work", true), ("more", false)],
        );
        check_spans("---\ntag: solo\n---\n", &[("solo", true)]);
        // Not tags: code, headings' `#`, numbers, a word's `#`.
        check_spans("`#code` and\n\n```\n#fenced\n```\n\nissue#12 #2024\n", &[]);
        check_spans("---\r\ntags:\r\n  - idea\r\n---\r\n", &[("idea", true)]);
    }

    #[test]
    fn a_rename_keeps_the_nested_part_and_the_case_of_the_rest() {
        let check = |tag: &str, expected: Option<&str>| {
            assert_eq!(renamed(tag, "Project", "work").as_deref(), expected, "{tag}")
        };
        check("project", Some("work"));
        check("Project/Alpha", Some("work/Alpha"));
        check("projects", None);
        check("other/project", None);
        assert!(check_name("a b").is_err() && check_name("2024").is_err() && check_name("#ok/fine").is_ok());
    }

    fn check_name(t: &str) -> Result<String, String> {
        check("newName", t)
    }
}
