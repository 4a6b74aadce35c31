//! The vault's note templates (Obsidian's Templates core plugin): the folder its setting names,
//! else `Templates`. Read only from inside the vault once links are followed, and only from
//! the folders the server may use: a template is a way to copy a file into a note, so it must
//! never copy one from elsewhere.

use std::path::Path;

use serde_json::Value;

use super::Scope;
use scholia_base::Error;

/// The templates folder as configured or found: a vault path, `None` when there is none.
fn folder(root: &Path) -> Result<Option<String>, Error> {
    let configured = std::fs::read_to_string(root.join(".obsidian/templates.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["folder"].as_str().map(|f| f.trim().trim_matches('/').to_string()))
        .filter(|f| !f.is_empty());
    if let Some(f) = configured {
        let escapes = Path::new(&f).is_absolute()
            || f.contains('\\')
            || f.split('/').any(|c| c == ".." || c == "." || c.is_empty());
        if escapes {
            return Err(Error::invalid(format!(
                "template: the vault's templates folder `{f}` (.obsidian/templates.json) is not a folder of the vault; set a folder inside it"
            )));
        }
        return Ok(Some(f));
    }
    Ok(["Templates", "templates", "_templates"]
        .iter()
        .find(|f| root.join(f).is_dir())
        .map(|f| f.to_string()))
}

/// The templates folder and the templates in it that are notes inside the vault and the
/// scope (links followed), sorted; an error says why none can be used. `root` is canonical.
fn listed(root: &Path, scope: &Scope, name: &str) -> Result<(String, Vec<(String, std::path::PathBuf)>), Error> {
    let Some(folder) = folder(root)? else {
        return Err(Error::invalid(format!(
            "template: `{name}` cannot be used: the vault has no templates folder (Obsidian's Templates setting, or a `Templates` folder)"
        )));
    };
    let dir = root.join(&folder);
    let real_dir = dir.canonicalize().ok().filter(|d| d.starts_with(root) && d.is_dir());
    let Some(real_dir) = real_dir else {
        return Err(Error::invalid(format!(
            "template: the templates folder `{folder}` is missing or outside the vault"
        )));
    };
    let inside = |real: &Path| {
        real.starts_with(root) && scholia_vault::paths::relative(root, real).is_some_and(|rel| scope.allows(&rel))
    };
    if !inside(&real_dir.join("x.md")) {
        return Err(Error::invalid(format!(
            "template: the templates folder `{folder}` is outside the folders this server may use ({}); no template can be used",
            scope.describe()
        )));
    }
    let mut usable: Vec<(String, std::path::PathBuf)> = std::fs::read_dir(&real_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let file = e.file_name().to_str()?.to_string();
            if file.starts_with('.') || !scholia_vault::paths::has_note_extension(Path::new(&file)) {
                return None;
            }
            let real = e.path().canonicalize().ok()?;
            (real.is_file() && inside(&real)).then_some((file, real))
        })
        .collect();
    usable.sort();
    Ok((folder, usable))
}

/// The template a note made from an editor's "Create note" starts from: the one named
/// `New note`, else the only one; `None` when the vault has none (or several, none so named).
pub(crate) fn for_new_note(root: &Path, scope: &Scope) -> Option<String> {
    let (_, usable) = listed(root, scope, "New note").ok()?;
    let names: Vec<String> = usable.iter().map(|(n, _)| scholia_vault::stem(n).to_string()).collect();
    names
        .iter()
        .find(|n| n.eq_ignore_ascii_case("new note"))
        .cloned()
        .or_else(|| (names.len() == 1).then(|| names[0].clone()))
}

/// The text of the template `name` (its file name without extension, any case), read from
/// inside the vault and the scope. `root` is canonical. Blocking.
pub(crate) fn read(root: &Path, scope: &Scope, name: &str) -> Result<String, Error> {
    let (folder, usable) = listed(root, scope, name)?;
    let wanted = name.trim().trim_end_matches(".md").to_lowercase();
    let Some((_, path)) = usable
        .iter()
        .find(|(n, _)| scholia_vault::stem(n).to_lowercase() == wanted)
    else {
        let valid = if usable.is_empty() {
            format!("none: `{folder}` holds no notes")
        } else {
            usable
                .iter()
                .map(|(n, _)| scholia_vault::stem(n).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(Error::invalid(format!(
            "template: `{name}` is not a template of the vault; valid: {valid}"
        )));
    };
    let shown = format!("{folder}/{}", path.file_name().unwrap_or_default().to_string_lossy());
    Ok(scholia_vault::read::read_note(path).map_err(|e| e.named(&shown))?)
}

/// Obsidian's core template variables: `{{title}}`, `{{date}}`, `{{time}}` (default formats).
pub(crate) fn fill(text: &str, title: &str) -> String {
    let now = time::OffsetDateTime::now_utc();
    let date = format!("{:04}-{:02}-{:02}", now.year(), now.month() as u8, now.day());
    let clock = format!("{:02}:{:02}", now.hour(), now.minute());
    text.replace("{{title}}", title)
        .replace("{{date}}", &date)
        .replace("{{time}}", &clock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_filled() {
        let t = fill("# {{title}}\nCreated {{date}}", "Koji");
        assert!(t.starts_with("# Koji\nCreated 20"), "{t}");
    }

    #[cfg(unix)]
    #[test]
    fn templates_come_from_inside_the_vault_and_the_scope() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(outside.path().join("secret.md"), "SECRET").unwrap();
        std::fs::create_dir_all(root.join("Templates")).unwrap();
        std::fs::create_dir_all(root.join("Journal")).unwrap();
        std::fs::write(root.join("Templates/Daily.md"), "# {{title}}").unwrap();
        std::fs::write(root.join("Journal/Wild yeast.md"), "private journal").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("Templates/pw.md")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("Templates/host.md")).unwrap();
        let all = Scope::default();
        assert_eq!(read(&root, &all, "Daily").unwrap(), "# {{title}}");
        let err = read(&root, &all, "pw").unwrap_err().message;
        assert_eq!(err, "template: `pw` is not a template of the vault; valid: Daily");
        assert!(read(&root, &all, "host").is_err());

        // A configured folder out of the vault is refused, not read.
        std::fs::create_dir_all(root.join(".obsidian")).unwrap();
        std::fs::write(root.join(".obsidian/templates.json"), r#"{"folder": "../../outside"}"#).unwrap();
        let err = read(&root, &all, "secret").unwrap_err().message;
        assert!(err.contains("is not a folder of the vault"), "{err}");
        std::fs::write(root.join(".obsidian/templates.json"), r#"{"folder": "Journal"}"#).unwrap();
        assert_eq!(read(&root, &all, "Wild yeast").unwrap(), "private journal");

        // A server confined to another folder uses no template out of its scope, and names none.
        std::fs::create_dir_all(root.join("Work")).unwrap();
        let scoped = Scope::new(&root, &["Work".into()]).unwrap();
        let err = read(&root, &scoped, "Wild yeast").unwrap_err().message;
        assert!(err.contains("outside the folders this server may use"), "{err}");
        assert!(!err.contains("Wild yeast` is"), "{err}");
    }
}
