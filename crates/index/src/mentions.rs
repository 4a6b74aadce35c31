//! Unlinked mentions for the editor: where a note's text names another note (its file name or
//! an alias, as written, whole, in the note's own words — [`scholia_vault::mentions`]) without
//! linking it. A one-word name that is a common word of the vault is no mention. The same
//! rule as offline research's "named on line N".

use std::collections::HashSet;
use std::ops::Range;

use tantivy::Term;

use super::{IndexError, VaultIndex};

/// A one-word name found in more than this share of the vault's notes is a common word.
pub const COMMON_SHARE: f32 = 0.03;
/// Mentions reported per note: a note that names hundreds of others gets its first ones.
const MAX_MENTIONS: usize = 200;

/// One place a note names another without a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// Bytes of the name in the text.
    pub range: Range<usize>,
    /// The note named.
    pub path: String,
    /// What a link to it from here says: `Name`, or `Name|as written` for an alias or another
    /// case.
    pub link: String,
}

impl VaultIndex {
    /// Whether a one-word `word` is common in the vault (in more than [`COMMON_SHARE`] of
    /// its notes).
    pub fn is_common_word(&self, word: &str) -> bool {
        self.word_share(word)
            .ok()
            .flatten()
            .is_some_and(|share| share > COMMON_SHARE)
    }

    /// The mentions in `text` (the note `rel`) of notes it does not link, in order.
    pub fn unlinked_mentions(&self, rel: &str, text: &str) -> Result<Vec<Mention>, IndexError> {
        let searcher = self.searcher();
        let parsed = scholia_vault::parse::parse(text, scholia_vault::stem(rel));
        let mut resolver = super::refs::Resolver::new(self, &searcher);
        let linked: HashSet<String> = parsed.links.iter().filter_map(|l| resolver.target(l, rel)).collect();
        let scope = self.scope();
        let mut candidates: Vec<String> = Vec::new();
        for words in super::related::mentioned_names(text, &searcher, self)? {
            let term = Term::from_field_text(self.fields.names, &words);
            for (path, _) in self.paths_with(&searcher, &term)? {
                if path != rel && !linked.contains(&path) && scope.allows(&path) && !candidates.contains(&path) {
                    candidates.push(path);
                }
            }
        }
        let common = |w: &str| self.is_common_word(w);
        let own = scholia_vault::mentions::OwnWords::of(text);
        let mut out: Vec<Mention> = Vec::new();
        for path in candidates {
            let stem = scholia_vault::stem(&path).to_string();
            let outline = self.outline(&path)?.unwrap_or_default();
            let mut names = vec![stem.clone()];
            names.extend(outline.aliases.iter().cloned());
            for (at, name) in own.naming(&names, &common) {
                let link = match name == stem {
                    true => stem.clone(),
                    false => format!("{stem}|{name}"),
                };
                out.push(Mention {
                    range: at..at + name.len(),
                    path: path.clone(),
                    link,
                });
            }
        }
        out.sort_by(|a, b| {
            (a.range.start, std::cmp::Reverse(a.range.end)).cmp(&(b.range.start, std::cmp::Reverse(b.range.end)))
        });
        // A longer name wins where two overlap ("Daily notes" over "notes").
        let mut kept: Vec<Mention> = Vec::new();
        for m in out {
            if kept.last().is_some_and(|k| m.range.start < k.range.end) {
                continue;
            }
            kept.push(m);
            if kept.len() == MAX_MENTIONS {
                break;
            }
        }
        Ok(kept)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_as_written_that_are_not_linked() {
        let f = crate::fixture::vault(&[
            (
                "Sourdough starter.md",
                "---\naliases: [natural levain]\n---\n# Sourdough starter\n",
            ),
            ("Kombucha.md", "# Kombucha\n"),
            (
                "Bread.md",
                "# Bread\n\nFeed the Sourdough starter daily; my natural levain is old. See [[Kombucha]].\n\nKombucha again, and `Sourdough starter` in code, and sourdough starter lower.\n",
            ),
            ("Notes/x.md", "# X\n"),
        ]);
        let text = std::fs::read_to_string(f.root().join("Bread.md")).unwrap();
        let found = f.index.unlinked_mentions("Bread.md", &text).unwrap();
        let shown: Vec<(&str, &str)> = found
            .iter()
            .map(|m| (&text[m.range.clone()], m.link.as_str()))
            .collect();
        // Kombucha is linked already; code and another case are no mention.
        assert_eq!(
            shown,
            [
                ("Sourdough starter", "Sourdough starter"),
                ("natural levain", "Sourdough starter|natural levain")
            ]
        );
    }
}
