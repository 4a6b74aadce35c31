//! Reading note files as text: binary and non-UTF-8 files are refused, huge files capped.

use std::io::Read;
use std::path::Path;

/// Notes larger than this are refused by the research pipelines (the index truncates instead).
pub const MAX_NOTE_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}: looks like a binary file (it contains NUL bytes), not a note")]
    Binary(String),
    #[error("{path}: not valid UTF-8 (first bad byte at offset {offset}); save it as UTF-8")]
    NotUtf8 { path: String, offset: usize },
    #[error("{path}: {size} bytes is larger than the {limit}-byte limit for notes")]
    TooLarge { path: String, size: u64, limit: u64 },
}

impl ReadError {
    pub fn io(path: &Path, source: std::io::Error) -> ReadError {
        ReadError::Io {
            path: path.display().to_string(),
            source,
        }
    }

    /// The same error naming the note `shown` (its vault path) instead of the path it was read
    /// from: an error never shows where the vault is on disk.
    pub fn named(self, shown: &str) -> ReadError {
        let path = shown.to_string();
        match self {
            ReadError::Io { source, .. } => ReadError::Io { path, source },
            ReadError::Binary(_) => ReadError::Binary(path),
            ReadError::NotUtf8 { offset, .. } => ReadError::NotUtf8 { path, offset },
            ReadError::TooLarge { size, limit, .. } => ReadError::TooLarge { path, size, limit },
        }
    }

    /// A short reason for skip summaries.
    pub fn reason(&self) -> &'static str {
        match self {
            ReadError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => "vanished",
            ReadError::Io { .. } => "unreadable",
            ReadError::Binary(_) => "binary",
            ReadError::NotUtf8 { .. } => "not UTF-8",
            ReadError::TooLarge { .. } => "too large",
        }
    }
}

/// A note's text, and whether it was cut at `limit` bytes.
#[derive(Debug)]
pub struct NoteText {
    pub text: String,
    pub truncated: bool,
    /// The file started with a UTF-8 byte order mark (not part of `text`).
    pub bom: bool,
}

/// Reads up to `limit` bytes of `path` as text. With `truncate`, a longer file is cut at the
/// last character boundary before `limit`; without, it is an error.
pub fn read_text(path: &Path, limit: u64, truncate: bool) -> Result<NoteText, ReadError> {
    let shown = || path.display().to_string();
    let io = |source| ReadError::Io { path: shown(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    if size > limit && !truncate {
        return Err(ReadError::TooLarge {
            path: shown(),
            size,
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(size.min(limit) as usize);
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    let truncated = bytes.len() as u64 > limit;
    if truncated {
        bytes.truncate(limit as usize);
    }
    let sniff = &bytes[..bytes.len().min(8192)];
    if sniff.contains(&0) {
        return Err(ReadError::Binary(shown()));
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            // A cut in the middle of a character is ours, not the file's fault.
            if truncated && e.utf8_error().error_len().is_none() {
                let mut bytes = e.into_bytes();
                bytes.truncate(valid);
                String::from_utf8(bytes).expect("prefix is valid")
            } else {
                return Err(ReadError::NotUtf8 {
                    path: shown(),
                    offset: valid,
                });
            }
        }
    };
    let (text, bom) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest.to_string(), true),
        None => (text, false),
    };
    Ok(NoteText { text, truncated, bom })
}

/// Reads a note for the research pipelines: the whole file, or an error.
pub fn read_note(path: &Path) -> Result<String, ReadError> {
    read_text(path, MAX_NOTE_BYTES, false).map(|t| t.text)
}

/// Like [`read_note`], keeping whether the file had a byte order mark.
pub fn read_note_full(path: &Path) -> Result<NoteText, ReadError> {
    read_text(path, MAX_NOTE_BYTES, false)
}

impl scholia_base::Coded for ReadError {
    fn code(&self) -> &'static str {
        match self {
            ReadError::Io { .. } => "READ_FAILED",
            _ => "NOT_A_NOTE",
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        match self {
            ReadError::Io { .. } => scholia_base::ErrorKind::Io,
            _ => scholia_base::ErrorKind::InvalidInput,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_binary_utf8_and_limits() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        std::fs::write(p("ok.md"), "héllo").unwrap();
        std::fs::write(p("bin.md"), b"\x89PNG\r\n\x1a\n\0\0\0").unwrap();
        std::fs::write(p("latin1.md"), b"caf\xe9").unwrap();
        std::fs::write(p("bom.md"), "\u{feff}# T").unwrap();
        assert_eq!(read_note(&p("ok.md")).unwrap(), "héllo");
        assert_eq!(read_note(&p("bom.md")).unwrap(), "# T");
        assert_eq!(read_note(&p("bin.md")).unwrap_err().reason(), "binary");
        let e = read_note(&p("latin1.md")).unwrap_err();
        assert_eq!(e.reason(), "not UTF-8");
        assert!(e.to_string().contains("offset 3"), "{e}");
        assert_eq!(read_note(&p("nope.md")).unwrap_err().reason(), "vanished");
        // é is two bytes: a cut after "h" + half of é must not fail.
        let t = read_text(&p("ok.md"), 2, true).unwrap();
        assert_eq!((t.text.as_str(), t.truncated), ("h", true));
        assert_eq!(read_text(&p("ok.md"), 2, false).unwrap_err().reason(), "too large");
    }
}
