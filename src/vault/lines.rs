//! Byte offset ⇄ line lookups over a text, shared by the parser, the section editor and the LSP.

/// Start offsets of every line of a text. Line `n` spans `starts[n]..starts[n + 1]` (the last
/// one runs to the end of the text) and includes its line terminator.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = Vec::with_capacity(text.len() / 40 + 1);
        starts.push(0);
        starts.extend(memchr_newlines(text.as_bytes()).map(|i| i + 1));
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The zero-based line holding `offset` (offsets past the end map to the last line).
    pub fn line_of(&self, offset: usize) -> u32 {
        let offset = offset.min(self.len);
        (self.starts.partition_point(|&s| s <= offset) - 1) as u32
    }

    /// Byte offset where `line` starts; `None` past the last line.
    pub fn line_start(&self, line: u32) -> Option<usize> {
        self.starts.get(line as usize).copied()
    }

    /// The byte range of `line` without its terminator (`\n` or `\r\n`).
    pub fn line_range(&self, text: &str, line: u32) -> Option<std::ops::Range<usize>> {
        let start = self.line_start(line)?;
        let mut end = self.line_start(line + 1).unwrap_or(self.len);
        let bytes = text.as_bytes();
        if end > start && bytes[end - 1] == b'\n' {
            end -= 1;
            if end > start && bytes[end - 1] == b'\r' {
                end -= 1;
            }
        }
        Some(start..end)
    }
}

fn memchr_newlines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes.iter().enumerate().filter_map(|(i, &b)| (b == b'\n').then_some(i))
}

/// The line ending a note mostly uses; new text written into it follows suit.
pub fn dominant_eol(text: &str) -> &'static str {
    let lf = text.matches('\n').count();
    let crlf = text.matches("\r\n").count();
    if crlf * 2 > lf { "\r\n" } else { "\n" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_offsets() {
        let text = "ab\r\ncd\n\nef";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_count(), 4);
        assert_eq!(idx.line_of(0), 0);
        assert_eq!(idx.line_of(3), 0);
        assert_eq!(idx.line_of(4), 1);
        assert_eq!(idx.line_of(100), 3);
        assert_eq!(idx.line_range(text, 0), Some(0..2));
        assert_eq!(idx.line_range(text, 2), Some(7..7));
        assert_eq!(idx.line_range(text, 3), Some(8..10));
        assert_eq!(idx.line_range(text, 4), None);
    }

    #[test]
    fn eol_detection() {
        assert_eq!(dominant_eol("a\r\nb\r\nc\n"), "\r\n");
        assert_eq!(dominant_eol("a\nb\r\nc\n"), "\n");
        assert_eq!(dominant_eol("no newline"), "\n");
    }
}
