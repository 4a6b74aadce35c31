//! The vault's links as the bench reads them: resolved as Obsidian does, and hidden.

use std::collections::{HashMap, HashSet};

use scholia::vault::parse::parse;

/// Resolves link targets as Obsidian does: by path, else file name, else alias.
pub struct Resolver {
    by_path: HashMap<String, String>,
    by_stem: HashMap<String, String>,
}

impl Resolver {
    pub fn new(notes: &[(String, String)]) -> Resolver {
        let (mut by_path, mut by_stem) = (HashMap::new(), HashMap::new());
        for (rel, text) in notes {
            let without = rel.trim_end_matches(".md").to_lowercase();
            by_stem
                .entry(without.rsplit('/').next().unwrap().to_string())
                .or_insert(rel.clone());
            by_path.insert(without, rel.clone());
            for alias in parse(text, "").aliases {
                let alias = alias.trim().to_lowercase();
                by_path.entry(alias.clone()).or_insert(rel.clone());
                by_stem
                    .entry(alias.rsplit('/').next().unwrap_or(&alias).to_string())
                    .or_insert(rel.clone());
            }
        }
        Resolver { by_path, by_stem }
    }

    pub fn resolve(&self, target: &str) -> Option<&str> {
        let t = target
            .split('#')
            .next()
            .unwrap()
            .trim()
            .trim_end_matches(".md")
            .to_lowercase();
        if t.is_empty() {
            return None;
        }
        self.by_path
            .get(&t)
            .or_else(|| self.by_stem.get(t.rsplit('/').next().unwrap()))
            .map(String::as_str)
    }

    /// The notes `text` links to (embeds too), resolved.
    pub fn targets(&self, text: &str, me: &str) -> HashSet<String> {
        parse(text, "")
            .links
            .iter()
            .filter_map(|l| self.resolve(&l.target))
            .filter(|t| *t != me)
            .map(str::to_string)
            .collect()
    }
}

/// `text` without the wikilinks (and embeds) that resolve to one of `gone`: link and text.
pub fn strip(text: &str, gone: &HashSet<String>, resolver: &Resolver) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("[[") {
        let Some(len) = rest[at + 2..].find("]]") else {
            break;
        };
        let inner = &rest[at + 2..at + 2 + len];
        let target = inner.split('|').next().unwrap();
        let hide = !inner.contains('\n') && resolver.resolve(target).is_some_and(|t| gone.contains(t));
        let start = if hide && rest[..at].ends_with('!') { at - 1 } else { at };
        out.push_str(&rest[..start]);
        if !hide {
            out.push_str(&rest[at..at + 4 + len]);
        }
        rest = &rest[at + 4 + len..];
    }
    out.push_str(rest);
    out
}
