//! Frontmatter (`---` YAML or `+++` TOML) as JSON values, with lenient accessors for the
//! shapes Obsidian users actually write (`tags: a, b`, `tags: [a]`, a YAML list).
//!
//! Frontmatter exists only at byte 0 (after an optional byte-order mark) and only when it is
//! closed, as in Obsidian: a `---` line later in a note is a thematic break, never metadata.
//! The block is bounded before it is parsed (size, nesting, alias expansion), so a hostile
//! note cannot exhaust memory: such a note is a note without frontmatter, and says why.

use std::ops::Range;

use serde_json::{Map, Value};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Larger blocks are not parsed (real frontmatter is a few hundred bytes).
pub const MAX_BYTES: usize = 64 * 1024;
/// Values (scalars, lists, maps) a block may hold once aliases are expanded.
pub const MAX_NODES: usize = 10_000;
/// Lists and maps nested deeper than this are not parsed.
pub const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone)]
pub struct Frontmatter {
    /// Bytes of the whole block, delimiters and the closing line's terminator included.
    pub range: Range<usize>,
    /// `None` when the block does not parse or is over a bound; the note is still a note.
    pub data: Option<Map<String, Value>>,
    /// Why `data` is `None` when the block was refused rather than malformed.
    pub refused: Option<String>,
}

/// Where the frontmatter block of `text` is: `(whole block, inner text, is YAML)`. Only at
/// byte 0, only when closed (`---` … `---`/`...`, or `+++` … `+++`), with `\n`, `\r\n` or `\r`
/// line endings.
pub fn locate(text: &str) -> Option<(Range<usize>, Range<usize>, bool)> {
    let start = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let mut lines = LineIter { text, at: start };
    let (first, _) = lines.next()?;
    let yaml = match text[first].trim_end_matches([' ', '\t']) {
        "---" => true,
        "+++" => false,
        _ => return None,
    };
    let inner_start = lines.at;
    for (line, end) in lines {
        let l = text[line.clone()].trim_end_matches([' ', '\t']);
        let closes = if yaml { l == "---" || l == "..." } else { l == "+++" };
        if closes {
            return Some((0..end, inner_start..line.start, yaml));
        }
    }
    None
}

/// Lines of `text` from `at`: (the line without its terminator, where the next line starts).
struct LineIter<'t> {
    text: &'t str,
    at: usize,
}

impl Iterator for LineIter<'_> {
    type Item = (Range<usize>, usize);
    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.text.len() {
            return None;
        }
        let rest = &self.text.as_bytes()[self.at..];
        let (len, term) = match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(i) if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') => (i, 2),
            Some(i) => (i, 1),
            None => (rest.len(), 0),
        };
        let line = self.at..self.at + len;
        self.at += len + term;
        Some((line, self.at))
    }
}

/// The frontmatter of `text`, parsed, if it has a block at byte 0.
pub fn read(text: &str) -> Option<Frontmatter> {
    let (range, inner, yaml) = locate(text)?;
    let body = &text[inner];
    if body.len() > MAX_BYTES {
        return Some(Frontmatter {
            range,
            data: None,
            refused: Some(format!(
                "frontmatter of {} bytes is larger than {MAX_BYTES}; read as a note without frontmatter",
                body.len()
            )),
        });
    }
    let (data, refused) = if yaml {
        match parse_yaml(body) {
            Ok(data) => (data, None),
            Err(why) => (None, Some(why)),
        }
    } else {
        (parse_toml(body), None)
    };
    Some(Frontmatter { range, data, refused })
}

fn parse_toml(text: &str) -> Option<Map<String, Value>> {
    let table: toml::Table = text.parse().ok()?;
    match serde_json::to_value(table).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// YAML to JSON from the parser's events, with aliases expanded under a node budget: `Ok(None)`
/// for malformed YAML or a document that is not a map, `Err` when a bound was hit.
fn parse_yaml(text: &str) -> Result<Option<Map<String, Value>>, String> {
    let mut builder = Builder::default();
    let parsed = Parser::new_from_str(text).load(&mut builder, false);
    if let Some(why) = builder.refused {
        return Err(why);
    }
    if parsed.is_err() {
        return Ok(None);
    }
    Ok(match builder.root {
        Some(Value::Object(map)) => Some(map),
        _ => None,
    })
}

/// A list or a map being built; a map holds the key waiting for its value.
enum Open {
    Seq(Vec<Value>, usize),
    Map(Map<String, Value>, Option<String>, usize),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Open>,
    /// Anchored values by anchor id, for aliases, with their node counts.
    anchors: std::collections::HashMap<usize, (Value, usize)>,
    /// Node counts of the open containers (what an anchor on them will cost to repeat).
    counts: Vec<usize>,
    nodes: usize,
    root: Option<Value>,
    refused: Option<String>,
}

impl Builder {
    fn refuse(&mut self, why: String) {
        if self.refused.is_none() {
            self.refused = Some(format!("{why}; read as a note without frontmatter"));
        }
        self.stack.clear();
    }

    /// Counts `n` nodes against the budget; false once it is spent.
    fn spend(&mut self, n: usize) -> bool {
        self.nodes = self.nodes.saturating_add(n);
        for c in &mut self.counts {
            *c = c.saturating_add(n);
        }
        if self.nodes > MAX_NODES {
            self.refuse(format!("frontmatter expands to more than {MAX_NODES} values"));
            return false;
        }
        true
    }

    fn push_value(&mut self, value: Value, nodes: usize, anchor: usize) {
        if anchor > 0 {
            self.anchors.insert(anchor, (value.clone(), nodes));
        }
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Open::Seq(items, _)) => items.push(value),
            Some(Open::Map(map, key, _)) => match key.take() {
                None => *key = Some(key_text(&value)),
                Some(k) => {
                    map.insert(k, value);
                }
            },
        }
    }

    fn open(&mut self, container: Open) {
        if self.stack.len() >= MAX_DEPTH {
            self.refuse(format!("frontmatter nests deeper than {MAX_DEPTH} levels"));
            return;
        }
        if self.spend(1) {
            self.stack.push(container);
            self.counts.push(1);
        }
    }

    fn close(&mut self) {
        let nodes = self.counts.pop().unwrap_or(1);
        match self.stack.pop() {
            Some(Open::Seq(items, anchor)) => self.push_value(Value::Array(items), nodes, anchor),
            Some(Open::Map(map, _, anchor)) => self.push_value(Value::Object(map), nodes, anchor),
            None => {}
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, _mark: Marker) {
        if self.refused.is_some() {
            return;
        }
        match ev {
            Event::Scalar(s, style, anchor, _) if self.spend(1) => {
                let value = if style == TScalarStyle::Plain {
                    scalar(&s)
                } else {
                    Value::String(s)
                };
                self.push_value(value, 1, anchor);
            }
            Event::Alias(id) => {
                let Some((value, nodes)) = self.anchors.get(&id).cloned() else {
                    return self.push_value(Value::Null, 1, 0);
                };
                if self.spend(nodes) {
                    self.push_value(value, nodes, 0);
                }
            }
            Event::SequenceStart(anchor, _) => self.open(Open::Seq(Vec::new(), anchor)),
            Event::MappingStart(anchor, _) => self.open(Open::Map(Map::new(), None, anchor)),
            Event::SequenceEnd | Event::MappingEnd => self.close(),
            _ => {}
        }
    }
}

/// A plain scalar typed as YAML 1.2's core schema types it.
fn scalar(s: &str) -> Value {
    use yaml_rust2::Yaml;
    match Yaml::from_str(s) {
        Yaml::Integer(i) => Value::from(i),
        Yaml::Real(r) => r
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .unwrap_or(Value::String(r)),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Null => Value::Null,
        _ => Value::String(s.to_string()),
    }
}

fn key_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl Frontmatter {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.data.as_ref()?.get(key)
    }

    pub fn string(&self, key: &str) -> Option<String> {
        match self.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// A list value, accepting a YAML/TOML list or a string separated by commas or spaces.
    pub fn string_list(&self, key: &str) -> Vec<String> {
        match self.get(key) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.trim().to_string()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .filter(|s| !s.is_empty())
                .collect(),
            Some(Value::String(s)) if key.starts_with("tag") => s
                .split(|c: char| c == ',' || c.is_whitespace())
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            Some(Value::String(s)) => s
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fm(source: &str) -> Frontmatter {
        read(source).expect("a block")
    }

    #[test]
    fn yaml_shapes() {
        let f = fm("---\ntitle: Hello\ntags:\n  - a\n  - b\nn: 3\n---\n");
        assert_eq!(f.string("title").as_deref(), Some("Hello"));
        assert_eq!(f.string_list("tags"), vec!["a", "b"]);
        assert_eq!(f.string("n").as_deref(), Some("3"));
        assert_eq!(f.get("n"), Some(&Value::from(3)));
        assert_eq!(fm("---\ntags: a b, c\n---\n").string_list("tags"), vec!["a", "b", "c"]);
        assert_eq!(
            fm("---\naliases: Big Dog, Doggo\n---\n").string_list("aliases"),
            vec!["Big Dog", "Doggo"]
        );
        let f = fm("---\nbase: &b {x: 1}\nother: *b\nq: 'no'\nyes: true\nnothing: ~\n---\n");
        assert_eq!(f.get("other"), Some(&serde_json::json!({"x": 1})));
        assert_eq!(f.get("q"), Some(&Value::String("no".into())));
        assert_eq!(f.get("yes"), Some(&Value::Bool(true)));
        assert_eq!(f.get("nothing"), Some(&Value::Null));
    }

    #[test]
    fn toml_and_broken() {
        let f = fm("+++\ntitle = \"T\"\n+++\n");
        assert_eq!(f.string("title").as_deref(), Some("T"));
        assert!(fm("---\n: : [\n---\n").data.is_none());
        assert!(fm("---\n---\n").data.is_none());
    }

    #[test]
    fn only_at_byte_zero_and_only_closed() {
        let check = |text: &str, expected: Option<&str>| {
            assert_eq!(locate(text).map(|(r, _, _)| &text[r]), expected, "{text:?}");
        };
        check("---\na: 1\n---\nbody", Some("---\na: 1\n---\n"));
        check("---\r\na: 1\r\n---\r\nbody", Some("---\r\na: 1\r\n---\r\n"));
        check("---\ra: 1\r---\rbody", Some("---\ra: 1\r---\r"));
        check("---\na: 1\n...\nbody", Some("---\na: 1\n...\n"));
        check("+++\na = 1\n+++", Some("+++\na = 1\n+++"));
        check("\u{feff}---\na: 1\n---\n", Some("\u{feff}---\na: 1\n---\n"));
        check("---\na: 1\n", None);
        check("# Title\n\n---\na: 1\n---\n", None);
        check("\n---\na: 1\n---\n", None);
        check("----\na: 1\n----\n", None);
        check("+++\na = 1\n---\n", None);
    }

    #[test]
    fn hostile_blocks_are_bounded() {
        // A billion laughs in 700 bytes: every level repeats the one before it nine times.
        let mut yaml =
            String::from("---\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
        let names = ["b", "c", "d", "e", "f", "g", "h", "i"];
        let mut prev = "a";
        for n in names {
            yaml.push_str(&format!(
                "{n}: &{n} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
            ));
            prev = n;
        }
        yaml.push_str("title: T\n---\n# Body\n");
        let started = std::time::Instant::now();
        let f = fm(&yaml);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert!(f.data.is_none());
        assert!(
            f.refused.as_deref().unwrap().contains("more than 10000 values"),
            "{:?}",
            f.refused
        );

        let deep = format!("---\nk: {}{}\n---\n", "[".repeat(200), "]".repeat(200));
        let f = fm(&deep);
        assert!(f.data.is_none());

        let big = format!("---\nk: \"{}\"\n---\n", "x".repeat(MAX_BYTES + 1));
        assert!(fm(&big).refused.unwrap().contains("larger than"));
    }
}
