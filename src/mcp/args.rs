//! Tool arguments, checked one by one: every problem is a tool error naming the field and what
//! is valid (a JSON-RPC error would be for protocol faults only).

use rmcp::model::JsonObject;
use serde_json::Value;

use scholia_base::Error;

pub struct Args {
    tool: &'static str,
    map: JsonObject,
    /// Every field the tool accepts, for the unknown-field message.
    known: &'static [&'static str],
}

/// The longest string argument any tool takes (a note's text included); longer ones are
/// refused before anything reads them.
pub const MAX_ARG_CHARS: usize = 200_000;

fn invalid(field: &str, value: &Value, valid: &str) -> Error {
    let shown = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    // A hostile value is named, not echoed whole.
    let mut shown: String = shown.chars().take(80).collect();
    if shown.len() >= 80 {
        shown.push('…');
    }
    Error::invalid(format!("{field}: `{shown}` is not valid; valid: {valid}"))
}

fn bounded(field: &str, s: &str) -> Result<(), Error> {
    let chars = s.chars().count();
    if chars > MAX_ARG_CHARS {
        return Err(Error::invalid(format!(
            "{field}: {chars} characters is longer than {MAX_ARG_CHARS}; give less"
        )));
    }
    Ok(())
}

impl Args {
    pub fn new(tool: &'static str, map: Option<JsonObject>, known: &'static [&'static str]) -> Result<Args, Error> {
        let map = map.unwrap_or_default();
        if let Some(unknown) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(Error::invalid(format!(
                "{unknown}: not an argument of {tool}; valid: {}",
                known.join(", ")
            )));
        }
        Ok(Args { tool, map, known })
    }

    fn get(&self, field: &str) -> Option<&Value> {
        debug_assert!(self.known.contains(&field), "{} has no field {field}", self.tool);
        self.map.get(field).filter(|v| !v.is_null())
    }

    /// A required, non-empty string.
    pub fn string(&self, field: &str, what: &str) -> Result<String, Error> {
        match self.get(field) {
            None => Err(Error::invalid(format!("{field}: missing; give {what}"))),
            Some(Value::String(s)) if s.trim().is_empty() => {
                Err(Error::invalid(format!("{field}: empty; give {what}")))
            }
            Some(Value::String(s)) => bounded(field, s).map(|_| s.clone()),
            Some(v) => Err(invalid(field, v, what)),
        }
    }

    pub fn opt_string(&self, field: &str, what: &str) -> Result<Option<String>, Error> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => bounded(field, s).map(|_| Some(s.clone())),
            Some(v) => Err(invalid(field, v, what)),
        }
    }

    /// An integer in `min..=max`, or `default` when absent.
    pub fn int(&self, field: &str, min: u64, max: u64, default: u64) -> Result<u64, Error> {
        self.opt_int(field, min, max).map(|v| v.unwrap_or(default))
    }

    pub fn opt_int(&self, field: &str, min: u64, max: u64) -> Result<Option<u64>, Error> {
        match self.get(field) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
                _ => Err(invalid(field, v, &format!("an integer from {min} to {max}"))),
            },
        }
    }

    /// `true` or `false`, or `default` when absent.
    pub fn bool(&self, field: &str, default: bool) -> Result<bool, Error> {
        match self.get(field) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(invalid(field, v, "true or false")),
        }
    }

    /// A number in `min..=max`, if given.
    pub fn opt_number(&self, field: &str, min: f64, max: f64) -> Result<Option<f64>, Error> {
        match self.get(field) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(n) if n >= min && n <= max => Ok(Some(n)),
                _ => Err(invalid(field, v, &format!("a number from {min} to {max}"))),
            },
        }
    }

    /// One of `values`, or `default` when absent.
    pub fn choice(&self, field: &str, values: &[&'static str], default: &'static str) -> Result<&'static str, Error> {
        match self.get(field) {
            None => Ok(default),
            Some(Value::String(s)) => values
                .iter()
                .find(|v| v.eq_ignore_ascii_case(s.trim()))
                .copied()
                .ok_or_else(|| invalid(field, &Value::String(s.clone()), &values.join(", "))),
            Some(v) => Err(invalid(field, v, &values.join(", "))),
        }
    }

    /// The raw value (validated by the engine, which names the field itself).
    pub fn raw(&self, field: &str) -> Option<&Value> {
        self.get(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Result<Args, Error> {
        Args::new("find_notes", v.as_object().cloned(), &["query", "limit"])
    }

    #[test]
    fn each_problem_names_the_field_and_what_is_valid() {
        let e = args(json!({"query": "x", "lmit": 3})).err().unwrap();
        assert_eq!(e.message, "lmit: not an argument of find_notes; valid: query, limit");
        let a = args(json!({"query": " ", "limit": 99})).unwrap();
        assert_eq!(
            a.string("query", "words to search for").unwrap_err().message,
            "query: empty; give words to search for"
        );
        assert_eq!(
            a.int("limit", 1, 50, 10).unwrap_err().message,
            "limit: `99` is not valid; valid: an integer from 1 to 50"
        );
        let a = args(json!({"limit": "ten"})).unwrap();
        assert_eq!(
            a.int("limit", 1, 50, 10).unwrap_err().message,
            "limit: `ten` is not valid; valid: an integer from 1 to 50"
        );
        assert_eq!(
            a.string("query", "words").unwrap_err().message,
            "query: missing; give words"
        );
        let a = args(json!({"query": "q"})).unwrap();
        assert_eq!(a.int("limit", 1, 50, 10).unwrap(), 10);
    }
}
