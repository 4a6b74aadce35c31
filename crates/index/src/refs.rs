//! References and renames over the link graph. The graph ([`super::graph`]) says which notes
//! may link; each is then read — the editor's buffer when it is open — and parsed, so every
//! range is exact against the text returned with it, whatever the index has seen so far.

use std::collections::HashMap;
use std::ops::Range;

use tantivy::Searcher;

use super::graph::{LinkScope, link_key};
use super::{IndexError, VaultIndex};
use scholia_vault::naming::NOT_IN_NAMES;
use scholia_vault::parse::{self, Link};

mod huge;

/// Where notes' texts come from: an editor's open buffers first, else the files (whole: links
/// are found and rewritten to the last byte).
pub trait Texts: Sync {
    /// The note's whole text, or why it cannot be read.
    fn read(&self, rel: &str) -> Result<String, String>;
    fn text(&self, rel: &str) -> Option<String> {
        self.read(rel).ok()
    }
    /// Notes open in an editor: searched whatever the index says (it lags a keystroke).
    fn open(&self) -> Vec<String>;
}

/// The index's own view: buffers it was told of, else the files on disk.
pub struct IndexTexts<'a>(pub &'a VaultIndex);

impl Texts for IndexTexts<'_> {
    fn read(&self, rel: &str) -> Result<String, String> {
        self.0.note_text_whole(rel)
    }
    fn open(&self) -> Vec<String> {
        scholia_base::lock(&self.0.overlays).keys().cloned().collect()
    }
}

/// Notes that could not be read, with why: `(path, reason)`.
pub type Unread = Vec<(String, String)>;

/// What links can point at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Anchor {
    Note(String),
    /// A heading of a note, by its text (matched as Obsidian does: case-insensitively).
    Heading {
        rel: String,
        heading: String,
    },
    /// A `^block` of a note.
    Block {
        rel: String,
        id: String,
    },
}

impl Anchor {
    pub fn rel(&self) -> &str {
        match self {
            Anchor::Note(rel) | Anchor::Heading { rel, .. } | Anchor::Block { rel, .. } => rel,
        }
    }
}

/// One note's links to an anchor: byte ranges of whole links (`[[…]]`, `![[…]]`) in `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteLinks {
    pub rel: String,
    pub text: String,
    pub links: Vec<Link>,
}

/// Text edits of one note: byte ranges of `text` and what replaces them, in order, apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteEdits {
    pub rel: String,
    pub text: String,
    pub edits: Vec<(Range<usize>, String)>,
}

impl NoteEdits {
    /// The text after the edits.
    pub fn applied(&self) -> String {
        let mut out = String::with_capacity(self.text.len());
        let mut at = 0;
        for (range, new) in &self.edits {
            out.push_str(&self.text[at..range.start]);
            out.push_str(new);
            at = range.end;
        }
        out.push_str(&self.text[at..]);
        out
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RenameError {
    #[error("{field}: empty; give the new name")]
    Empty { field: &'static str },
    #[error(
        "{field}: `{name}` holds {chars}, which links cannot name; use letters, digits, spaces and - _ . , ( ) instead"
    )]
    BadName {
        field: &'static str,
        name: String,
        chars: String,
    },
    #[error("{field}: `{name}` is outside the vault; give a path inside it, e.g. `notes/idea.md`")]
    Outside { field: &'static str, name: String },
    #[error("{field}: `{to}` already exists; choose another name")]
    Exists { field: &'static str, to: String },
    #[error("{field}: `{name}` is already the name of `{by}`; links to either would be ambiguous; choose another name")]
    NameTaken {
        field: &'static str,
        name: String,
        by: String,
    },
    #[error(
        "newName: the note already has a heading `{heading}` (line {line}); links to it would then lead to the renamed one; choose another name"
    )]
    HeadingTaken { heading: String, line: u32 },
    #[error("`{0}` is not a note of the vault index")]
    NoSuchNote(String),
    #[error("heading `{0}` is not in the note")]
    NoSuchHeading(String),
    #[error(transparent)]
    Index(#[from] IndexError),
}

impl scholia_base::Coded for RenameError {
    fn code(&self) -> &'static str {
        match self {
            RenameError::Exists { .. } | RenameError::NameTaken { .. } | RenameError::HeadingTaken { .. } => "CONFLICT",
            RenameError::NoSuchNote(_) => "NOTE_NOT_FOUND",
            RenameError::Index(e) => e.code(),
            _ => "INVALID_INPUT",
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        use scholia_base::ErrorKind;
        match self {
            RenameError::Exists { .. } | RenameError::NameTaken { .. } | RenameError::HeadingTaken { .. } => {
                ErrorKind::Conflict
            }
            RenameError::NoSuchNote(_) => ErrorKind::InvalidInput,
            RenameError::Index(e) => e.kind(),
            _ => ErrorKind::InvalidInput,
        }
    }
}

/// Characters a wikilink cannot carry in a heading.
const NOT_IN_HEADINGS: &[char] = &['[', ']', '#', '^', '|', '\n', '\r'];

fn refuse(field: &'static str, name: &str, bad: &[char]) -> Result<(), RenameError> {
    let found: Vec<String> = bad
        .iter()
        .filter(|c| name.contains(**c))
        .map(|c| format!("`{}`", c.escape_default()))
        .collect();
    match found.is_empty() {
        true => Ok(()),
        false => Err(RenameError::BadName {
            field,
            name: name.to_string(),
            chars: found.join(" "),
        }),
    }
}

/// The vault path a note at `from` gets when renamed to `name`: in its folder (a bare name),
/// or at a vault path (a name with `/`); its extension kept unless `name` gives one.
pub fn renamed_path(from: &str, name: &str, field: &'static str) -> Result<String, RenameError> {
    let name = name.trim().trim_start_matches('/');
    if name.is_empty() {
        return Err(RenameError::Empty { field });
    }
    let parts: Vec<&str> = name.split('/').collect();
    if parts.iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
        return Err(RenameError::Outside {
            field,
            name: name.to_string(),
        });
    }
    refuse(field, name, NOT_IN_NAMES)?;
    let ext = from.rsplit_once('.').map(|(_, e)| e).unwrap_or("md");
    let has_ext = scholia_vault::paths::has_note_extension(std::path::Path::new(name));
    let file = if has_ext {
        name.to_string()
    } else {
        format!("{name}.{ext}")
    };
    Ok(if name.contains('/') {
        file
    } else {
        match from.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/{file}"),
            None => file,
        }
    })
}

impl VaultIndex {
    /// Every link to `anchor` across the vault, per note (the anchor's own note included for
    /// `[[#Heading]]` links), by path.
    pub fn references(&self, anchor: &Anchor, texts: &dyn Texts) -> Result<Vec<NoteLinks>, IndexError> {
        Ok(self.references_checked(anchor, texts)?.0)
    }

    /// [`VaultIndex::references`], and the notes that may link there but could not be read,
    /// with why (a change that rewrites links must not go ahead without them).
    pub fn references_checked(
        &self,
        anchor: &Anchor,
        texts: &dyn Texts,
    ) -> Result<(Vec<NoteLinks>, Unread), IndexError> {
        let searcher = self.searcher();
        let mut unread = Vec::new();
        let rel = anchor.rel();
        let mut candidates = self.linking_to_with(&searcher, rel, LinkScope::All)?;
        // Open buffers the index may not have seen yet: only those that name the note at all.
        let names = self.keys_of(&searcher, rel)?;
        let indexed: std::collections::HashSet<String> = candidates.iter().cloned().collect();
        candidates.extend(texts.open());
        candidates.push(rel.to_string());
        candidates.sort();
        candidates.dedup();
        // Notes too large to rewrite, whose links past the indexed part the index lacks (those
        // outside this server's folders are counted, not named: `linking_from_outside`).
        let scope = self.scope();
        unread.extend(
            self.too_large_naming(&names)?
                .into_iter()
                .filter(|(source, _)| !indexed.contains(source) && (scope.allows(source) || scope.holds_file(source))),
        );
        let mut resolver = Resolver::new(self, &searcher);
        let mut out = Vec::new();
        for source in candidates {
            let text = match texts.read(&source) {
                Ok(t) => t,
                Err(why) => {
                    if indexed.contains(&source) {
                        unread.push((source, why));
                    }
                    continue;
                }
            };
            let unseen = source != rel && !indexed.contains(&source);
            // An open buffer whose text the index has already taken says what it links there.
            if unseen && (self.indexed_as(&source, &text) || !names_any(&text, &names)) {
                continue;
            }
            let links: Vec<Link> = parse::links(&text)
                .into_iter()
                .filter(|l| resolver.points_at(l, &source, anchor))
                .collect();
            if !links.is_empty() {
                out.push(NoteLinks {
                    rel: source,
                    text,
                    links,
                });
            }
        }
        Ok((out, unread))
    }

    /// The note `link` (parsed from the note `from`) leads to: a wikilink as [`Self::resolve_link`]
    /// resolves it, a Markdown link by its path (relative to `from` first) or file name.
    pub fn resolve_parsed(
        &self,
        link: &scholia_vault::parse::Link,
        from: &str,
    ) -> Result<Option<crate::NoteRef>, IndexError> {
        let searcher = self.searcher();
        let Some(path) = Resolver::new(self, &searcher).target(link, from) else {
            return Ok(None);
        };
        let Some(addr) = self.doc_of(&searcher, &path)? else {
            return Ok(None);
        };
        let outline = self.stored(&searcher, addr)?.1;
        Ok(Some(crate::NoteRef { path, outline }))
    }

    /// How many notes link to `rel` (any of its headings and blocks too), from the index.
    pub fn backlink_count(&self, rel: &str) -> Result<usize, IndexError> {
        Ok(self.linking_to(rel, LinkScope::All)?.len())
    }

    /// The edits that rename heading `old` of the note `rel` to `new`: the heading line and
    /// every `[[Note#old]]` (and `[[#old]]` in the note) to it.
    pub fn plan_heading_rename(
        &self,
        rel: &str,
        old: &str,
        new: &str,
        texts: &dyn Texts,
    ) -> Result<Vec<NoteEdits>, RenameError> {
        let new = new.trim();
        if new.is_empty() {
            return Err(RenameError::Empty { field: "newName" });
        }
        refuse("newName", new, NOT_IN_HEADINGS)?;
        let text = texts
            .text(rel)
            .ok_or_else(|| RenameError::NoSuchNote(rel.to_string()))?;
        let heading_range =
            heading_text_range(&text, old).ok_or_else(|| RenameError::NoSuchHeading(old.to_string()))?;
        // Another heading of that name would take the links (`[[Note#new]]` finds the first).
        if !same_heading(old, new)
            && let Some(taken) = parse::headings(&text).into_iter().find(|h| same_heading(&h.text, new))
        {
            return Err(RenameError::HeadingTaken {
                heading: taken.text,
                line: taken.line + 1,
            });
        }
        let anchor = Anchor::Heading {
            rel: rel.to_string(),
            heading: old.to_string(),
        };
        let mut out: Vec<NoteEdits> = Vec::new();
        let mut own = vec![(heading_range, new.to_string())];
        for note in self.references(&anchor, texts)? {
            let mut changes = Vec::new();
            for link in &note.links {
                if let Some(range) = raw_heading(&note.text, link) {
                    changes.push((range, new.to_string()));
                }
            }
            if note.rel == rel {
                own.extend(changes);
                continue;
            }
            out.push(NoteEdits {
                rel: note.rel,
                text: note.text,
                edits: changes,
            });
        }
        own.sort_by_key(|(r, _)| r.start);
        out.insert(
            0,
            NoteEdits {
                rel: rel.to_string(),
                text,
                edits: own,
            },
        );
        Ok(out)
    }
}

/// Resolves links seen from their notes, once per key and folder.
pub(crate) struct Resolver<'a> {
    index: &'a VaultIndex,
    searcher: &'a Searcher,
    cache: HashMap<(String, String), Option<String>>,
}

impl<'a> Resolver<'a> {
    pub(crate) fn new(index: &'a VaultIndex, searcher: &'a Searcher) -> Resolver<'a> {
        Resolver {
            index,
            searcher,
            cache: HashMap::new(),
        }
    }

    /// The path `link` in note `from` resolves to; `from` itself for `[[#Heading]]`.
    pub(crate) fn target(&mut self, link: &Link, from: &str) -> Option<String> {
        if link.target.trim().is_empty() {
            return Some(from.to_string());
        }
        crate::graph::wants(link, from)
            .iter()
            .find_map(|want| self.resolve(want, from))
    }

    /// How a Markdown link in `from` names its note (the first of its readings that resolves),
    /// and that note.
    pub(crate) fn markdown_form(&mut self, link: &Link, from: &str) -> Option<(scholia_vault::mdlink::Form, String)> {
        use crate::graph::Want;
        use scholia_vault::mdlink::Form;
        for form in scholia_vault::mdlink::candidates(from, &link.target) {
            let want = match &form {
                Form::Name(p) => Want::Named(link_key(p)?),
                Form::Relative(p) | Form::Absolute(p) => Want::Path(link_key(p)?),
            };
            if let Some(found) = self.resolve(&want, from) {
                return Some((form, found));
            }
        }
        None
    }

    fn resolve(&mut self, want: &crate::graph::Want, from: &str) -> Option<String> {
        use crate::graph::Want;
        let (key, folder) = match want {
            Want::Named(key) => (
                key.clone(),
                from.rsplit_once('/').map(|(d, _)| d).unwrap_or("").to_string(),
            ),
            // A path is the same from every folder; `/` keeps it apart from names.
            Want::Path(key) => (format!("/{key}"), String::new()),
        };
        if let Some(hit) = self.cache.get(&(key.clone(), folder.clone())) {
            return hit.clone();
        }
        let found = match want {
            Want::Named(k) => self
                .index
                .resolve_key_path(self.searcher, k, Some(from))
                .ok()
                .flatten()
                .map(|(p, _)| p),
            Want::Path(k) => self.index.path_of_key(self.searcher, k).ok().flatten(),
        };
        self.cache.insert((key, folder), found.clone());
        found
    }

    fn points_at(&mut self, link: &Link, from: &str, anchor: &Anchor) -> bool {
        if link.target.trim().is_empty() && matches!(anchor, Anchor::Note(_)) {
            return false;
        }
        if self.target(link, from).as_deref() != Some(anchor.rel()) {
            return false;
        }
        match anchor {
            Anchor::Note(_) => true,
            Anchor::Heading { heading, .. } => link
                .heading
                .as_deref()
                .is_some_and(|h| same_heading(last_heading(h), heading)),
            Anchor::Block { id, .. } => link.block.as_deref().is_some_and(|b| b.eq_ignore_ascii_case(id)),
        }
    }
}

impl VaultIndex {
    /// Whether the index holds `text` as the open buffer of `rel` (its overlay).
    fn indexed_as(&self, rel: &str, text: &str) -> bool {
        scholia_base::lock(&self.overlays).get(rel).is_some_and(|t| t == text)
    }
}

/// Whether `text` holds one of the lower-cased `names` anywhere (a link to a note must).
fn names_any(text: &str, names: &[String]) -> bool {
    let lower = text.to_lowercase();
    names.iter().any(|n| lower.contains(n.as_str()))
}

/// `[[Note#A#B]]` names B (nested under A).
pub fn last_heading(h: &str) -> &str {
    h.rsplit('#').next().unwrap_or(h).trim()
}

/// Headings as links match them: case and surrounding space aside.
pub fn same_heading(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

/// The bytes of the note part as written inside a wikilink (`Note` of `![[Note#h|a]]`);
/// `None` for a same-note link.
pub fn raw_target(text: &str, link: &Link) -> Option<Range<usize>> {
    let inner = inner(text, link)?;
    let s = &text[inner.clone()];
    let end = s.find(['#', '|']).unwrap_or(s.len());
    let end = if s[..end].ends_with('\\') { end - 1 } else { end };
    let lead = s.len() - s.trim_start().len();
    let written = s[lead..end].trim_end();
    (!written.is_empty()).then(|| inner.start + lead..inner.start + lead + written.len())
}

/// The bytes of the last heading segment as written inside a wikilink (`h` of `[[N#A#h|x]]`).
fn raw_heading(text: &str, link: &Link) -> Option<Range<usize>> {
    let inner = inner(text, link)?;
    let s = &text[inner.clone()];
    let end = s.find('|').unwrap_or(s.len());
    let end = if s[..end].ends_with('\\') { end - 1 } else { end };
    let hash = s[..end].rfind('#')?;
    if s[hash..].starts_with("#^") {
        return None;
    }
    let seg = &s[hash + 1..end];
    let lead = seg.len() - seg.trim_start().len();
    let h = seg.trim();
    (!h.is_empty()).then(|| inner.start + hash + 1 + lead..inner.start + hash + 1 + lead + h.len())
}

/// The bytes between `[[` and `]]` of a link.
fn inner(text: &str, link: &Link) -> Option<Range<usize>> {
    let whole = text.get(link.range.clone())?;
    let open = whole.find("[[")? + 2;
    let close = whole.rfind("]]")?;
    (open <= close).then(|| link.range.start + open..link.range.start + close)
}

/// The bytes of a heading's text on its line (`Old` of `## Old ##`), first heading of that
/// text.
pub fn heading_text_range(text: &str, heading: &str) -> Option<Range<usize>> {
    let parsed = parse::parse(text, "");
    let h = parsed.headings.iter().find(|h| same_heading(&h.text, heading))?;
    let start = h.section.start;
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = &text[start..line_end];
    let line = line.strip_suffix('\r').unwrap_or(line);
    let hashes = line.trim_start().len() - line.trim_start().trim_start_matches('#').len();
    let lead = line.len() - line.trim_start().len();
    let after = lead + hashes;
    let body = &line[after..];
    let body_lead = body.len() - body.trim_start().len();
    let mut content = body.trim();
    // A closing sequence of `#`s is not part of the heading.
    let without = content.trim_end_matches('#');
    if without.len() < content.len() && (without.is_empty() || without.ends_with(' ')) {
        content = without.trim_end();
    }
    let begin = start + after + body_lead;
    (line.is_char_boundary(after)).then(|| begin..begin + content.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link_in(text: &str) -> Link {
        parse::parse(text, "").links.into_iter().next().expect("a link")
    }

    #[test]
    fn raw_parts_of_links() {
        let check = |text: &str, target: Option<&str>, heading: Option<&str>| {
            let l = link_in(text);
            assert_eq!(raw_target(text, &l).map(|r| &text[r]), target, "{text}");
            assert_eq!(raw_heading(text, &l).map(|r| &text[r]), heading, "{text}");
        };
        check("see [[Old]] here", Some("Old"), None);
        check("see [[Old|shown]]", Some("Old"), None);
        check("see ![[ Old #Part ]]", Some("Old"), Some("Part"));
        check("see [[Folder/Old.md#A#B|x]]", Some("Folder/Old.md"), Some("B"));
        check("see [[#Only heading]]", None, Some("Only heading"));
        check("see [[Old#^block]]", Some("Old"), None);
        check("| a | [[Old\\|alias]] |\n|---|---|\n", Some("Old"), None);
    }

    #[test]
    fn renamed_paths() {
        let check = |from: &str, name: &str, expected: Result<&str, &str>| {
            let got = renamed_path(from, name, "newName").map_err(|e| e.to_string());
            match expected {
                Ok(p) => assert_eq!(got.as_deref(), Ok(p), "{name}"),
                Err(e) => assert!(got.as_ref().is_err_and(|m| m.contains(e)), "{name}: {got:?}"),
            }
        };
        check("Notes/Old.md", "New", Ok("Notes/New.md"));
        check("Old.markdown", "New", Ok("New.markdown"));
        check("Notes/Old.md", "Archive/New", Ok("Archive/New.md"));
        check("Notes/Old.md", "New.txt", Ok("Notes/New.txt"));
        check("Old.md", "  ", Err("newName: empty"));
        check("Old.md", "a|b", Err("`|`"));
        check("Old.md", "x#y", Err("`#`"));
        check("Old.md", "../x", Err("outside the vault"));
    }

    #[test]
    fn heading_ranges() {
        let check = |text: &str, heading: &str, expected: Option<&str>| {
            assert_eq!(heading_text_range(text, heading).map(|r| &text[r]), expected, "{text}")
        };
        check("# T\n\n## Old one\nx\n", "old one", Some("Old one"));
        check("## Old ##\n", "Old", Some("Old"));
        check("  ### C# notes\n", "C# notes", Some("C# notes"));
        check("## Other\n", "Old", None);
        check("## Über\r\n", "über", Some("Über"));
    }
}

#[cfg(test)]
mod vault_tests;
