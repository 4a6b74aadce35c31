//! Markdown links to notes — `[text](Note.md)`, `[text](Note%20name.md)`, `[text](<Note
//! name.md>)`, `[text](../folder/Note.md#Heading)` and their embeds `![…](…)` — as Obsidian
//! writes them: what a destination names, seen from the linking note, and how a destination is
//! written again when its note moves, in the style it had (encoded stays encoded, `<…>` stays
//! bracketed, relative stays relative to the linking note).

use percent_encoding::percent_decode_str;

/// How a destination names its note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Form {
    /// A bare file name (`Note.md`): by name, the linking note's folder first.
    Name(String),
    /// A path from the linking note's folder (`../x/Note.md`, `sub/Note.md`, `./Note.md`).
    Relative(String),
    /// A vault path (`/x/Note.md`, or `x/Note.md` when no note is there relative to the link).
    Absolute(String),
}

impl Form {
    /// The vault path or name it names.
    pub fn named(&self) -> &str {
        match self {
            Form::Name(p) | Form::Relative(p) | Form::Absolute(p) => p,
        }
    }
}

/// The path part and the `#fragment` (without `#`) of a destination as written.
pub fn split(written: &str) -> (&str, Option<&str>) {
    match written.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (written, None),
    }
}

/// A destination's path part, percent-decoded.
pub fn decode(path: &str) -> String {
    percent_decode_str(path).decode_utf8_lossy().into_owned()
}

/// Whether a destination as written names a note: no URL scheme, a path (not only a
/// `#fragment`) with a note's extension.
pub fn names_a_note(written: &str) -> bool {
    let (path, _) = split(written.trim());
    if path.is_empty() || path.starts_with("//") || has_scheme(path) {
        return false;
    }
    crate::paths::has_note_extension(std::path::Path::new(&decode(path)))
}

fn has_scheme(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
}

/// The notes a decoded destination `path` may name from the note `from` (a vault path), in
/// the order Obsidian tries them.
pub fn candidates(from: &str, path: &str) -> Vec<Form> {
    if let Some(abs) = path.strip_prefix('/') {
        return vec![Form::Absolute(abs.to_string())];
    }
    let explicit = path.starts_with("./") || path.starts_with("../");
    let relative = resolve(from, path).map(Form::Relative);
    if explicit {
        return relative.into_iter().collect();
    }
    if !path.contains('/') {
        return vec![Form::Name(path.to_string())];
    }
    relative
        .into_iter()
        .chain(std::iter::once(Form::Absolute(path.to_string())))
        .collect()
}

/// `path` seen from the folder of the note `from`, as a vault path; `None` when it climbs out
/// of the vault.
pub fn resolve(from: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = folder(from).split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The folder of a vault path (`""` at the root).
pub fn folder(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(d, _)| d)
}

/// The path from the folder of the note `from` to the vault path `to`.
pub fn relative(from: &str, to: &str) -> String {
    let from_parts: Vec<&str> = folder(from).split('/').filter(|p| !p.is_empty()).collect();
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_parts
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count()
        .min(to_parts.len() - 1);
    let mut out: Vec<&str> = vec![".."; from_parts.len() - common];
    out.extend(&to_parts[common..]);
    out.join("/")
}

/// What a link's path must encode: a space would end the destination, the others would end
/// or confuse it. Letters beyond ASCII stay as they are (both forms decode alike).
fn must_encode(c: char) -> bool {
    c.is_ascii_control() || " %()<>#\"\\[]".contains(c)
}

/// A path written as a destination: inside `<…>` as is; else percent-encoded where it was, or
/// where it must be.
pub fn render(path: &str, angle: bool) -> String {
    if angle {
        return path.to_string();
    }
    let mut out = String::with_capacity(path.len() + 8);
    for c in path.chars() {
        if must_encode(c) {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The new destination path (before any `#fragment`) for a link written as `form` in a note
/// that will be at `linker`, to a note that will be at `target`, keeping a leading `/` or `./`
/// as `written` had it.
pub fn new_path(form: &Form, linker: &str, target: &str, written: &str) -> String {
    match form {
        Form::Name(_) => target.rsplit('/').next().unwrap_or(target).to_string(),
        Form::Absolute(_) => {
            let lead = if written.starts_with('/') { "/" } else { "" };
            format!("{lead}{target}")
        }
        Form::Relative(_) => {
            let rel = relative(linker, target);
            if written.starts_with("./") && !rel.starts_with("../") {
                format!("./{rel}")
            } else {
                rel
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_destinations_name() {
        for (written, note) in [
            ("Note.md", true),
            ("Note%20name.md", true),
            ("folder/Note.md#Heading", true),
            ("../Note.MD", true),
            ("Note", false),
            ("https://example.com/a.md", false),
            ("mailto:a@b.md", false),
            ("obsidian://open?file=a.md", false),
            ("#Heading", false),
            ("image.png", false),
            ("//host/x.md", false),
        ] {
            assert_eq!(names_a_note(written), note, "{written}");
        }
    }

    #[test]
    fn candidates_in_obsidians_order() {
        let c = |from: &str, path: &str| candidates(from, path);
        assert_eq!(c("Journal/Day.md", "Note.md"), [Form::Name("Note.md".into())]);
        assert_eq!(
            c("Journal/Day.md", "../Places/Kyoto.md"),
            [Form::Relative("Places/Kyoto.md".into())]
        );
        assert_eq!(c("Day.md", "../x.md"), []);
        assert_eq!(
            c("Journal/Day.md", "sub/N.md"),
            [
                Form::Relative("Journal/sub/N.md".into()),
                Form::Absolute("sub/N.md".into())
            ]
        );
        assert_eq!(c("Journal/Day.md", "/a/N.md"), [Form::Absolute("a/N.md".into())]);
        assert_eq!(c("Journal/Day.md", "./N.md"), [Form::Relative("Journal/N.md".into())]);
    }

    #[test]
    fn relative_paths() {
        let check = |from: &str, to: &str, want: &str| {
            assert_eq!(relative(from, to), want, "{from} -> {to}");
            assert_eq!(resolve(from, want).as_deref(), Some(to), "{from} + {want}");
        };
        check("Journal/Day.md", "Places/Kyoto.md", "../Places/Kyoto.md");
        check("Journal/Day.md", "Journal/Other.md", "Other.md");
        check("Day.md", "Places/Kyoto.md", "Places/Kyoto.md");
        check("a/b/c/Day.md", "a/x.md", "../../x.md");
        check("a/Day.md", "a/b/c/x.md", "b/c/x.md");
        check("a/b/Day.md", "x.md", "../../x.md");
    }

    #[test]
    fn destinations_keep_their_style() {
        assert_eq!(render("New name.md", true), "New name.md");
        assert_eq!(render("New name.md", false), "New%20name.md");
        assert_eq!(render("Plain.md", false), "Plain.md");
        assert_eq!(render("Café.md", false), "Café.md");
        assert_eq!(render("a (1).md", false), "a%20%281%29.md");
        let rel = Form::Relative("x".into());
        assert_eq!(
            new_path(&rel, "Archive/2026/Day.md", "Places/K.md", "../Places/K.md"),
            "../../Places/K.md"
        );
        assert_eq!(new_path(&rel, "Places/Day.md", "Places/K.md", "./K.md"), "./K.md");
        assert_eq!(
            new_path(&Form::Absolute("x".into()), "D.md", "New/K.md", "/Old/K.md"),
            "/New/K.md"
        );
        assert_eq!(new_path(&Form::Name("x".into()), "D.md", "New/K2.md", "K.md"), "K2.md");
    }
}
