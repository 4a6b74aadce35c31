//! Open documents and the one place where LSP positions become byte offsets.
//!
//! Positions count UTF-16 code units unless the client negotiated UTF-8 or UTF-32. A position
//! past the end of a line or of the document is clamped, never an error.

use tower_lsp_server::ls_types::{Position, PositionEncodingKind, Range, TextDocumentContentChangeEvent};

use scholia_vault::lines::LineIndex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
    Utf32,
}

impl Encoding {
    /// The client's preference among what it offers, UTF-16 when it says nothing.
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
        let offered = offered.unwrap_or_default();
        if offered.contains(&PositionEncodingKind::UTF8) {
            Encoding::Utf8
        } else if offered.contains(&PositionEncodingKind::UTF32) && !offered.contains(&PositionEncodingKind::UTF16) {
            Encoding::Utf32
        } else {
            Encoding::Utf16
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
            Encoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    fn width(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Utf32 => 1,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Document {
    pub text: String,
    pub version: i32,
    /// The file's canonical path, once known (resolved off the runtime after `didOpen`).
    pub path: Option<std::path::PathBuf>,
    lines: LineIndex,
}

impl Document {
    pub fn new(text: String, version: i32) -> Document {
        let lines = LineIndex::new(&text);
        Document {
            text,
            version,
            path: None,
            lines,
        }
    }

    /// The byte offset of `pos`, clamped to the line's end and the document's end.
    pub fn offset(&self, pos: Position, enc: Encoding) -> usize {
        offset(&self.text, &self.lines, pos, enc)
    }

    pub fn position(&self, offset: usize, enc: Encoding) -> Position {
        position(&self.text, &self.lines, offset, enc)
    }

    pub fn range(&self, bytes: std::ops::Range<usize>, enc: Encoding) -> Range {
        Range::new(self.position(bytes.start, enc), self.position(bytes.end, enc))
    }

    /// Applies one change of `textDocument/didChange` (a range edit, or the whole text).
    pub fn apply(&mut self, change: TextDocumentContentChangeEvent, enc: Encoding) {
        match change.range {
            Some(range) => {
                let start = self.offset(range.start, enc);
                let end = self.offset(range.end, enc).max(start);
                self.text.replace_range(start..end, &change.text);
            }
            None => self.text = change.text,
        }
        self.lines = LineIndex::new(&self.text);
    }
}

pub fn offset(text: &str, lines: &LineIndex, pos: Position, enc: Encoding) -> usize {
    let Some(line) = lines.line_range(text, pos.line) else {
        return text.len();
    };
    let mut units = 0usize;
    for (i, c) in text[line.clone()].char_indices() {
        if units >= pos.character as usize {
            return line.start + i;
        }
        units += enc.width(c);
    }
    line.end
}

pub fn position(text: &str, lines: &LineIndex, offset: usize, enc: Encoding) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let line = lines.line_of(offset);
    let start = lines.line_start(line).unwrap_or(0);
    let character: usize = text[start..offset].chars().map(|c| enc.width(c)).sum();
    Position::new(line, character as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    #[test]
    fn offsets_in_each_encoding() {
        // "é" is 2 UTF-8 bytes / 1 UTF-16 unit; "𝄞" is 4 bytes / 2 units / 1 scalar.
        let doc = Document::new("aé𝄞b\r\nx\n".into(), 1);
        let check = |p: Position, enc, expected: usize| {
            assert_eq!(doc.offset(p, enc), expected, "{p:?} {enc:?}");
        };
        check(pos(0, 0), Encoding::Utf16, 0);
        check(pos(0, 2), Encoding::Utf16, 3);
        check(pos(0, 4), Encoding::Utf16, 7);
        check(pos(0, 5), Encoding::Utf16, 8);
        check(pos(0, 3), Encoding::Utf8, 3);
        check(pos(0, 3), Encoding::Utf32, 7);
        // Past the end of a line: its end, before `\r\n`.
        check(pos(0, 99), Encoding::Utf16, 8);
        check(pos(1, 99), Encoding::Utf16, 11);
        // Past the last line: the end of the text.
        check(pos(9, 0), Encoding::Utf16, 12);
        assert_eq!(doc.position(7, Encoding::Utf16), pos(0, 4));
        assert_eq!(doc.position(7, Encoding::Utf8), pos(0, 7));
        assert_eq!(
            doc.position(5, Encoding::Utf16),
            pos(0, 2),
            "inside a character rounds down"
        );
        assert_eq!(doc.position(11, Encoding::Utf16), pos(1, 1));
    }

    #[test]
    fn incremental_changes() {
        let mut doc = Document::new("hello\nworld\n".into(), 1);
        let change = |range: Option<Range>, text: &str| TextDocumentContentChangeEvent {
            range,
            range_length: None,
            text: text.into(),
        };
        doc.apply(change(Some(Range::new(pos(1, 0), pos(1, 5))), "there"), Encoding::Utf16);
        assert_eq!(doc.text, "hello\nthere\n");
        doc.apply(change(Some(Range::new(pos(0, 5), pos(0, 5))), ", 🌍"), Encoding::Utf16);
        assert_eq!(doc.text, "hello, 🌍\nthere\n");
        doc.apply(change(Some(Range::new(pos(0, 7), pos(0, 9))), "all"), Encoding::Utf16);
        assert_eq!(doc.text, "hello, all\nthere\n");
        // A range past the end is clamped rather than panicking.
        doc.apply(change(Some(Range::new(pos(5, 3), pos(9, 9))), "!"), Encoding::Utf16);
        assert_eq!(doc.text, "hello, all\nthere\n!");
        doc.apply(change(None, "new"), Encoding::Utf16);
        assert_eq!(doc.text, "new");
    }

    #[test]
    fn negotiation() {
        use PositionEncodingKind as K;
        assert_eq!(Encoding::negotiate(None), Encoding::Utf16);
        assert_eq!(Encoding::negotiate(Some(&[K::UTF16, K::UTF8])), Encoding::Utf8);
        assert_eq!(Encoding::negotiate(Some(&[K::UTF32])), Encoding::Utf32);
    }
}
