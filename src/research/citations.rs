//! Citation integrity: after synthesis, every URL must be one that was gathered and every
//! `[[wikilink]]` must resolve to a note of the vault. Anything else is removed (its text kept)
//! and counted, so no invented source reaches the note.

use std::collections::HashSet;

/// What a check removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Removed {
    pub urls: Vec<String>,
    pub wikilinks: Vec<String>,
}

impl Removed {
    pub fn count(&self) -> usize {
        self.urls.len() + self.wikilinks.len()
    }
}

/// URLs compare without a trailing slash or fragment.
pub fn normalize_url(url: &str) -> String {
    let url = url.trim();
    let url = url.split_once('#').map(|(u, _)| u).unwrap_or(url);
    url.trim_end_matches('/').to_string()
}

/// Cleans `text`: Markdown links, autolinks and bare URLs not in `allowed_urls` (normalized)
/// lose their target; wikilinks for which `resolves` is false become plain text.
pub fn enforce(text: &str, allowed_urls: &HashSet<String>, resolves: &dyn Fn(&str) -> bool) -> (String, Removed) {
    let mut removed = Removed::default();
    let text = markdown_links(text, allowed_urls, &mut removed);
    let text = wikilinks(&text, resolves, &mut removed);
    let text = bare_urls(&text, allowed_urls, &mut removed);
    (text, removed)
}

fn markdown_links(text: &str, allowed: &HashSet<String>, removed: &mut Removed) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        // Wikilinks are handled separately.
        if rest[open..].starts_with("[[") {
            let end = rest[open..].find("]]").map(|e| open + e + 2).unwrap_or(rest.len());
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        let Some(close) = rest[open..].find("](").map(|c| open + c) else {
            break;
        };
        let label = &rest[open + 1..close];
        let Some(paren_end) = rest[close + 2..].find(')').map(|p| close + 2 + p) else {
            break;
        };
        let target = &rest[close + 2..paren_end];
        if label.contains('\n')
            || label.contains('[')
            || target.contains(char::is_whitespace) && !target.contains(" \"")
        {
            out.push_str(&rest[..open + 1]);
            rest = &rest[open + 1..];
            continue;
        }
        let url = target.split(" \"").next().unwrap_or(target);
        let is_image = rest[..open].ends_with('!');
        out.push_str(&rest[..open]);
        if allowed.contains(&normalize_url(url)) && !is_image {
            out.push_str(&rest[open..=paren_end]);
        } else {
            if is_image {
                out.pop();
            }
            removed.urls.push(url.to_string());
            out.push_str(label);
        }
        rest = &rest[paren_end + 1..];
    }
    out.push_str(rest);
    out
}

fn wikilinks(text: &str, resolves: &dyn Fn(&str) -> bool, removed: &mut Removed) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("[[") {
        let Some(close) = rest[open + 2..].find("]]").map(|c| open + 2 + c) else {
            break;
        };
        let inner = &rest[open + 2..close];
        let (target_part, alias) = inner
            .split_once('|')
            .map(|(t, a)| (t, Some(a)))
            .unwrap_or((inner, None));
        let target = target_part.split('#').next().unwrap_or("").trim();
        let embed = rest[..open].ends_with('!');
        if !inner.contains('\n') && !target.is_empty() && resolves(target) {
            out.push_str(&rest[..close + 2]);
        } else {
            let before = if embed { &rest[..open - 1] } else { &rest[..open] };
            out.push_str(before);
            out.push_str(alias.unwrap_or(target_part).trim());
            removed.wikilinks.push(target_part.trim().to_string());
        }
        rest = &rest[close + 2..];
    }
    out.push_str(rest);
    out
}

/// Bare `http(s)://` URLs outside Markdown links.
fn bare_urls(text: &str, allowed: &HashSet<String>, removed: &mut Removed) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = [rest.find("https://"), rest.find("http://")]
            .into_iter()
            .flatten()
            .min();
        let Some(start) = next else { break };
        let before = &rest[..start];
        // The target of a Markdown link was judged with its link.
        let in_link = before.ends_with("](");
        let len = rest[start..]
            .find(|c: char| c.is_whitespace() || c == ')' || c == '>' || c == '"')
            .unwrap_or(rest.len() - start);
        let mut url = &rest[start..start + len];
        url = url.trim_end_matches(['.', ',', ';', ':', '!', '?']);
        out.push_str(before);
        if in_link || allowed.contains(&normalize_url(url)) {
            out.push_str(url);
        } else {
            removed.urls.push(url.to_string());
            if out.ends_with('<') {
                out.pop();
                rest = rest[start + url.len()..]
                    .strip_prefix('>')
                    .unwrap_or(&rest[start + url.len()..]);
                continue;
            }
        }
        rest = &rest[start + url.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: &str, expected_removed: usize) {
        let allowed: HashSet<String> = ["https://real.example/a", "https://real.example/b"]
            .iter()
            .map(|u| normalize_url(u))
            .collect();
        let resolves = |t: &str| matches!(t.to_lowercase().as_str(), "wild yeast" | "kombucha");
        let (got, removed) = enforce(input, &allowed, &resolves);
        assert_eq!(got, expected, "{input:?}");
        assert_eq!(removed.count(), expected_removed, "{input:?}: {removed:?}");
    }

    #[test]
    fn integrity() {
        check(
            "See [A](https://real.example/a).",
            "See [A](https://real.example/a).",
            0,
        );
        check(
            "See [A](https://real.example/a/#frag).",
            "See [A](https://real.example/a/#frag).",
            0,
        );
        check("See [Fake](https://invented.example/x).", "See Fake.", 1);
        check("![img](https://real.example/a) ok", "img ok", 1);
        check(
            "Bare https://invented.example/y, and https://real.example/b.",
            "Bare , and https://real.example/b.",
            1,
        );
        check("Auto <https://invented.example/z> link", "Auto  link", 1);
        check(
            "Notes: [[Wild yeast]], [[Kombucha#SCOBY|tea]], [[Imaginary]] and [[Ghost|boo]].",
            "Notes: [[Wild yeast]], [[Kombucha#SCOBY|tea]], Imaginary and boo.",
            2,
        );
        check("Embed ![[Nope]] here", "Embed Nope here", 1);
        check("[not a link] and [x](", "[not a link] and [x](", 0);
        check(
            "Mixed [[Wild yeast]] [A](https://real.example/a) [B](http://evil/)",
            "Mixed [[Wild yeast]] [A](https://real.example/a) B",
            1,
        );
    }
}
