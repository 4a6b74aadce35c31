//! Frontmatter (`---` YAML or `+++` TOML) as JSON values, with lenient accessors for the
//! shapes Obsidian users actually write (`tags: a, b`, `tags: [a]`, a YAML list).

use std::ops::Range;

use serde_json::{Map, Value};
use yaml_rust2::{Yaml, YamlLoader};

#[derive(Debug, Clone)]
pub struct Frontmatter {
    /// Bytes of the whole block, delimiters included.
    pub range: Range<usize>,
    /// `None` when the block does not parse; the note is still a note.
    pub data: Option<Map<String, Value>>,
}

/// Parses the metadata block at `range` of `source` (as reported by pulldown-cmark).
pub fn parse_block(source: &str, range: Range<usize>, yaml: bool) -> Frontmatter {
    let block = &source[range.clone()];
    let inner = block.split_once('\n').map(|(_, rest)| rest).unwrap_or("").trim_end();
    let inner = inner
        .rsplit_once('\n')
        .map(|(body, last)| if is_delimiter(last) { body } else { inner })
        .unwrap_or(if is_delimiter(inner) { "" } else { inner });
    let data = if yaml { parse_yaml(inner) } else { parse_toml(inner) };
    Frontmatter { range, data }
}

fn is_delimiter(line: &str) -> bool {
    matches!(line.trim(), "---" | "..." | "+++")
}

fn parse_yaml(text: &str) -> Option<Map<String, Value>> {
    let docs = YamlLoader::load_from_str(text).ok()?;
    match docs.into_iter().next().map(yaml_to_json) {
        Some(Value::Object(map)) => Some(map),
        _ => None,
    }
}

fn parse_toml(text: &str) -> Option<Map<String, Value>> {
    let table: toml::Table = text.parse().ok()?;
    match serde_json::to_value(table).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

fn yaml_to_json(y: Yaml) -> Value {
    match y {
        Yaml::Real(s) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .unwrap_or(Value::String(s)),
        Yaml::Integer(i) => Value::from(i),
        Yaml::String(s) => Value::String(s),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Yaml::Hash(hash) => Value::Object(
            hash.into_iter()
                .filter_map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) => s,
                        Yaml::Integer(i) => i.to_string(),
                        Yaml::Boolean(b) => b.to_string(),
                        Yaml::Real(r) => r,
                        _ => return None,
                    };
                    Some((key, yaml_to_json(v)))
                })
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
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
        let end = source.len();
        parse_block(source, 0..end, !source.starts_with("+++"))
    }

    #[test]
    fn yaml_shapes() {
        let f = fm("---\ntitle: Hello\ntags:\n  - a\n  - b\nn: 3\n---\n");
        assert_eq!(f.string("title").as_deref(), Some("Hello"));
        assert_eq!(f.string_list("tags"), vec!["a", "b"]);
        assert_eq!(f.string("n").as_deref(), Some("3"));
        assert_eq!(fm("---\ntags: a b, c\n---\n").string_list("tags"), vec!["a", "b", "c"]);
        assert_eq!(
            fm("---\naliases: Big Dog, Doggo\n---\n").string_list("aliases"),
            vec!["Big Dog", "Doggo"]
        );
    }

    #[test]
    fn toml_and_broken() {
        let f = fm("+++\ntitle = \"T\"\n+++\n");
        assert_eq!(f.string("title").as_deref(), Some("T"));
        assert!(fm("---\n: : [\n---\n").data.is_none());
        assert!(fm("---\n---\n").data.is_none());
    }
}
