//! Byte offset ⇄ line lookups over a text, shared by the parser, the section editor and the LSP.

/// Start offsets of every line of a text. Line `n` spans `starts[n]..starts[n + 1]` (the last
/// one runs to the end of the text) and includes its line terminator: `\n`, `\r\n` or a lone
/// `\r` (classic Mac), as in CommonMark and LSP.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = Vec::with_capacity(text.len() / 40 + 1);
        starts.push(0);
        starts.extend(line_ends(text.as_bytes()));
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

    /// The byte range of `line` without its terminator.
    pub fn line_range(&self, text: &str, line: u32) -> Option<std::ops::Range<usize>> {
        let start = self.line_start(line)?;
        let mut end = self.line_start(line + 1).unwrap_or(self.len);
        let bytes = text.as_bytes();
        if end > start && bytes[end - 1] == b'\n' {
            end -= 1;
        }
        if end > start && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        Some(start..end)
    }
}

/// Where each line after the first starts: after `\n`, and after a `\r` not followed by `\n`.
fn line_ends(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes.iter().enumerate().filter_map(|(i, &b)| match b {
        b'\n' => Some(i + 1),
        b'\r' if bytes.get(i + 1) != Some(&b'\n') => Some(i + 1),
        _ => None,
    })
}

/// `text` with every lone `\r` (a classic Mac line ending) made `\n`: the same length, so
/// every byte offset stays valid. pulldown-cmark does not read lone `\r` as CommonMark does
/// (fences and HTML blocks run on past it): everything parses the normalised text.
pub fn normalized(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut bytes = text.as_bytes().to_vec();
    for i in 0..bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n') {
            bytes[i] = b'\n';
        }
    }
    std::borrow::Cow::Owned(String::from_utf8(bytes).expect("ASCII for ASCII keeps UTF-8"))
}

/// The line terminators of `text`: (`\n` alone, `\r\n`, `\r` alone).
fn eol_counts(text: &str) -> (usize, usize, usize) {
    let bytes = text.as_bytes();
    let (mut lf, mut crlf, mut cr) = (0, 0, 0);
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\n' if i > 0 && bytes[i - 1] == b'\r' => crlf += 1,
            b'\n' => lf += 1,
            b'\r' if bytes.get(i + 1) != Some(&b'\n') => cr += 1,
            _ => {}
        }
    }
    (lf, crlf, cr)
}

/// The line ending a note mostly uses; new text written into it follows suit.
pub fn dominant_eol(text: &str) -> &'static str {
    let (lf, crlf, cr) = eol_counts(text);
    if cr > lf + crlf {
        "\r"
    } else if crlf > lf {
        "\r\n"
    } else {
        "\n"
    }
}

/// The terminator of the line that starts at `at` (`None` for the last, unterminated line).
pub fn eol_of_line(text: &str, at: usize) -> Option<&'static str> {
    let rest = &text.as_bytes()[at..];
    let i = rest.iter().position(|&b| b == b'\n' || b == b'\r')?;
    Some(match (rest[i], rest.get(i + 1)) {
        (b'\r', Some(b'\n')) => "\r\n",
        (b'\r', _) => "\r",
        _ => "\n",
    })
}

/// How many line terminators end `text` (each of `\n`, `\r\n`, `\r` counts once), ignoring
/// spaces and tabs between them.
pub fn trailing_line_breaks(text: &str) -> usize {
    let tail = text.trim_end_matches(['\n', '\r', ' ', '\t']);
    let (lf, crlf, cr) = eol_counts(&text[tail.len()..]);
    lf + crlf + cr
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
        assert_eq!(dominant_eol("a\rb\rc\n"), "\r");
        assert_eq!(eol_of_line("a\rb", 0), Some("\r"));
        assert_eq!(eol_of_line("a\r\nb", 0), Some("\r\n"));
        assert_eq!(eol_of_line("a\r\nb", 3), None);
        assert_eq!(trailing_line_breaks("x\r\r"), 2);
        assert_eq!(trailing_line_breaks("x\r\n\r\n"), 2);
        assert_eq!(trailing_line_breaks("x\n \n"), 2);
        assert_eq!(trailing_line_breaks("x"), 0);
    }

    #[test]
    fn classic_mac_lines() {
        let text = "ab\rcd\r\ref";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_count(), 4);
        assert_eq!(idx.line_of(3), 1);
        assert_eq!(idx.line_range(text, 1), Some(3..5));
        assert_eq!(idx.line_range(text, 2), Some(6..6));
        assert_eq!(idx.line_start(3), Some(7));
    }
}
