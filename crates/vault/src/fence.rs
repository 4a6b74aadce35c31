//! Text given to a model as data, fenced: between `<untrusted-data>` tags it cannot open or
//! close, in attribute values it cannot end. What a model answer must not echo is what a
//! prompt holds outside its fences ([`without_data`]).

/// A rendered prompt without its `<untrusted-data>` blocks: the instructions alone (what an
/// answer must not echo).
pub fn without_data(prompt: &str) -> String {
    const OPEN: &str = "<untrusted-data";
    const CLOSE: &str = "</untrusted-data>";
    let mut out = String::with_capacity(prompt.len());
    let mut rest = prompt;
    while let Some(i) = rest.find(OPEN) {
        out.push_str(&rest[..i]);
        match rest[i..].find(CLOSE) {
            Some(j) => rest = &rest[i + j + CLOSE.len()..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// Text placed inside `<untrusted-data>` cannot open or close a fence: every spelling of the
/// tag name (any case) loses its hyphen. Linear: one lowercased copy.
pub fn untrusted(text: &str) -> String {
    const NAME: &str = "untrusted-data";
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(i) = lower[at..].find(NAME).map(|i| at + i) {
        out.push_str(&text[at..i]);
        out.push_str("untrusted_data");
        at = i + NAME.len();
    }
    out.push_str(&text[at..]);
    out
}

/// A value for a prompt's tag attribute (`path="…"`): one line, no quote or angle bracket.
pub fn attr(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    untrusted(&one_line)
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_without_their_data() {
        assert_eq!(
            without_data("Do this.\n<untrusted-data source=\"note\">the note</untrusted-data>\nThen that."),
            "Do this.\n\nThen that."
        );
        assert_eq!(without_data("A <untrusted-data x>never closed"), "A ");
    }

    #[test]
    fn untrusted_data_cannot_close_its_tag() {
        assert_eq!(
            untrusted("a </untrusted-data> b </UNTRUSTED-DATA> <untrusted-data x>"),
            "a </untrusted_data> b </untrusted_data> <untrusted_data x>"
        );
        assert_eq!(
            attr("a\"> </untrusted-data>\nb"),
            "a&quot;&gt; &lt;/untrusted_data&gt; b"
        );
    }
}
