//! A team server's tokens (`scholia mcp --http --tokens-file FILE`): each token, stored as its
//! SHA-256, has a name and a scope — read-only, the folders it may use, the tools it is
//! offered — the same policies as the command-line flags. The file must be readable by its
//! owner only; it is read again when it changes, so a token removed from it is refused on the
//! next request, without a restart. Logs name a token by its name, never the token.
//!
//! ```toml
//! [[token]]
//! name = "alice"
//! sha256 = "…"                 # printf %s "$TOKEN" | sha256sum
//! read_only = true             # default false
//! allow_folder = ["Journal"]   # default: the whole vault
//! tools = ["find_notes", "read_note"]   # default: every tool
//! ```

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use scholia_base::Error;

/// One token's name and scope.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenScope {
    pub name: String,
    /// Hex SHA-256 of the token.
    sha256: String,
    #[serde(default)]
    pub read_only: bool,
    #[serde(default)]
    pub allow_folder: Vec<String>,
    #[serde(default)]
    pub tools: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    token: Vec<TokenScope>,
}

/// When the file was read (its modification time and size).
type Stamp = (SystemTime, u64);
/// What validates a token's scope (the surface's tools, the vault's folders).
type Check = Box<dyn Fn(&TokenScope) -> Result<(), Error> + Send + Sync>;

/// The tokens of a file, read again when it changes.
pub struct Tokens {
    path: PathBuf,
    loaded: Mutex<(Option<Stamp>, Vec<TokenScope>)>,
    check: Check,
}

/// The token's hash as the file keeps it.
pub fn hash(token: &str) -> String {
    scholia_base::hex(&Sha256::digest(token.as_bytes()))
}

fn invalid(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::invalid(format!("--tokens-file {}: {why}", path.display()))
}

/// Reads and checks the file: owner-only, TOML of `[[token]]`, names unique, hashes of 64 hex
/// digits, each scope valid (`check`: the surface's tools and the vault's folders).
fn read(
    path: &Path,
    check: &dyn Fn(&TokenScope) -> Result<(), Error>,
) -> Result<((SystemTime, u64), Vec<TokenScope>), Error> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|e| invalid(path, e))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(invalid(
            path,
            format!("readable by others (mode {mode:o}); it holds the tokens' hashes: chmod 600 it"),
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| invalid(path, e))?;
    let file: File = toml::from_str(&text).map_err(|e| invalid(path, e.message()))?;
    let mut names = std::collections::HashSet::new();
    for t in &file.token {
        if t.name.trim().is_empty() || !names.insert(t.name.clone()) {
            return Err(invalid(
                path,
                format!("token name `{}`: empty or given twice; valid: a unique name", t.name),
            ));
        }
        if t.sha256.len() != 64 || !t.sha256.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(invalid(
                path,
                format!(
                    "token `{}`: sha256 is not 64 hex digits; valid: printf %s \"$TOKEN\" | sha256sum",
                    t.name
                ),
            ));
        }
        check(t).map_err(|e| invalid(path, format!("token `{}`: {}", t.name, e.message)))?;
    }
    if file.token.is_empty() {
        return Err(invalid(
            path,
            "no [[token]]; valid: one [[token]] table per person, with name and sha256",
        ));
    }
    let stamp = (meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), meta.len());
    Ok((stamp, file.token))
}

impl Tokens {
    /// Reads `path` now (a bad file is an error at start-up); `check` validates each scope.
    pub fn load(
        path: &Path,
        check: impl Fn(&TokenScope) -> Result<(), Error> + Send + Sync + 'static,
    ) -> Result<Tokens, Error> {
        let (stamp, tokens) = read(path, &check)?;
        Ok(Tokens {
            path: path.to_path_buf(),
            loaded: Mutex::new((Some(stamp), tokens)),
            check: Box::new(check),
        })
    }

    /// The scope of the token `given`, reading the file again when it changed; `None` for a
    /// token it does not hold (revoked, or never given). A file that became invalid refuses
    /// every token until it is fixed.
    pub fn scope_of(&self, given: &str) -> Option<TokenScope> {
        let mut loaded = scholia_base::lock(&self.loaded);
        let now = std::fs::metadata(&self.path)
            .ok()
            .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
        if now != loaded.0 {
            match read(&self.path, &*self.check) {
                Ok((stamp, tokens)) => *loaded = (Some(stamp), tokens),
                Err(e) => {
                    tracing::error!("{}: every token is refused until it is fixed", e.message);
                    *loaded = (now, Vec::new());
                }
            }
        }
        let wanted = hash(given);
        // Compared in constant time, whichever entry matches.
        let mut found = None;
        for t in &loaded.1 {
            let same = t
                .sha256
                .to_ascii_lowercase()
                .bytes()
                .zip(wanted.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
            if same && found.is_none() {
                found = Some(t.clone());
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(path: &Path, text: &str, mode: u32) {
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn tokens_carry_their_scope_and_are_revoked_by_editing_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        let (alice, bob) = ("alice-token-0123456789", "bob-token-9876543210");
        let text = format!(
            "[[token]]\nname = \"alice\"\nsha256 = \"{}\"\nread_only = true\nallow_folder = [\"Journal\"]\n\n[[token]]\nname = \"bob\"\nsha256 = \"{}\"\ntools = [\"find_notes\"]\n",
            hash(alice),
            hash(bob)
        );
        write(&path, &text, 0o600);
        let tokens = Tokens::load(&path, |_| Ok(())).unwrap();
        let a = tokens.scope_of(alice).unwrap();
        assert_eq!(
            (a.name.as_str(), a.read_only, a.allow_folder.as_slice()),
            ("alice", true, &["Journal".to_string()][..])
        );
        assert_eq!(
            tokens.scope_of(bob).unwrap().tools,
            Some(vec!["find_notes".to_string()])
        );
        assert!(tokens.scope_of("nope").is_none());
        // Bob removed: refused on the next request.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let only_alice = text.split("\n\n[[token]]").next().unwrap().to_string() + "\n";
        write(&path, &only_alice, 0o600);
        assert!(tokens.scope_of(bob).is_none());
        assert!(tokens.scope_of(alice).is_some());
    }

    #[test]
    fn a_file_others_can_read_or_a_bad_entry_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        let good = format!("[[token]]\nname = \"a\"\nsha256 = \"{}\"\n", hash("x"));
        write(&path, &good, 0o644);
        let err = Tokens::load(&path, |_| Ok(())).err().unwrap().message;
        assert!(
            err.contains("readable by others (mode 644)") && err.contains("chmod 600"),
            "{err}"
        );
        write(&path, "[[token]]\nname = \"a\"\nsha256 = \"abc\"\n", 0o600);
        assert!(
            Tokens::load(&path, |_| Ok(()))
                .err()
                .unwrap()
                .message
                .contains("64 hex digits")
        );
        write(&path, &good, 0o600);
        let err = Tokens::load(&path, |_| Err(Error::invalid("tools: `x` is not a tool")))
            .err()
            .unwrap()
            .message;
        assert!(err.contains("token `a`: tools: `x` is not a tool"), "{err}");
        write(&path, &format!("{good}{good}"), 0o600);
        assert!(
            Tokens::load(&path, |_| Ok(()))
                .err()
                .unwrap()
                .message
                .contains("given twice")
        );
    }
}
