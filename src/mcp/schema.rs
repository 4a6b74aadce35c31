//! Tool schemas derived with schemars from the Rust types a tool reads and returns, made plain
//! for every client (inlined, no `$schema`, no non-standard formats, optional fields without
//! `null`, unknown arguments refused, strings bounded), and the check of a call's arguments
//! against its input schema: so the schema an agent reads is the one its call is held to, and
//! every problem names the field and what is valid.

use rmcp::model::JsonObject;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};

use scholia_base::Error;

/// The longest string argument any tool takes (a note's text included); longer ones are
/// refused before anything reads them.
pub const MAX_ARG_CHARS: usize = 200_000;

/// `serialize`: the schema of what the server writes (a field it skips when empty is not
/// required); otherwise of what it reads.
fn generate<T: JsonSchema>(serialize: bool) -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    let settings = match serialize {
        true => settings.for_serialize(),
        false => settings.for_deserialize(),
    };
    let generator = settings.into_generator();
    let mut v = generator.into_root_schema_for::<T>().to_value();
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
    }
    plain(&mut v);
    v
}

/// A tool's input schema: every property described, optional ones plain (no `null`), strings
/// bounded, unknown properties refused.
pub fn input<T: JsonSchema>() -> JsonObject {
    let mut v = generate::<T>(false);
    let o = v.as_object_mut().expect("an input is an object");
    if let Some(Value::Object(props)) = o.get_mut("properties") {
        for spec in props.values_mut() {
            *spec = without_null(spec.take());
            // A value left out is no value: nothing to show as a default.
            if let Some(o) = spec.as_object_mut()
                && o.get("default") == Some(&Value::Null)
            {
                o.remove("default");
            }
            if spec.get("type").and_then(Value::as_str) == Some("string") && spec.get("maxLength").is_none() {
                spec["maxLength"] = MAX_ARG_CHARS.into();
            }
        }
    }
    o.insert("additionalProperties".into(), Value::Bool(false));
    o.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    o.clone()
}

/// A tool's output schema.
pub fn output<T: JsonSchema>() -> JsonObject {
    generate::<T>(true)
        .as_object()
        .cloned()
        .expect("an output is an object")
}

/// Drops what clients do not need or do not know: schemars' integer formats (`uint32`…, which
/// strict validators reject) and whitespace runs in descriptions (from wrapped doc comments).
fn plain(v: &mut Value) {
    match v {
        Value::Object(o) => {
            // A `oneOf` of string constants (an enum whose variants have doc comments) is an
            // `enum`: what clients render as choices and what the argument check reads.
            let constants: Option<Vec<Value>> = o.get("oneOf").and_then(Value::as_array).and_then(|alts| {
                alts.iter()
                    .map(|a| a.get("const").filter(|c| c.is_string()).cloned())
                    .collect()
            });
            if let Some(values) = constants {
                o.remove("oneOf");
                o.insert("type".into(), "string".into());
                o.insert("enum".into(), Value::Array(values));
            }
            if o.get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| f.starts_with("int") || f.starts_with("uint") || f == "double" || f == "float")
            {
                o.remove("format");
            }
            if let Some(Value::String(d)) = o.get_mut("description") {
                *d = d.split_whitespace().collect::<Vec<_>>().join(" ");
            }
            o.values_mut().for_each(plain);
        }
        Value::Array(a) => a.iter_mut().for_each(plain),
        _ => {}
    }
}

/// `{"anyOf": [X, {"type": "null"}]}` or `{"type": [T, "null"]}` as X or T: an absent
/// argument is how a call leaves an option out.
fn without_null(spec: Value) -> Value {
    let Value::Object(mut o) = spec else { return spec };
    if let Some(Value::Array(types)) = o.get("type") {
        let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if rest.len() == 1 {
            o.insert("type".into(), rest[0].clone());
        }
    }
    if let Some(Value::Array(any)) = o.get("anyOf") {
        let rest: Vec<&Value> = any.iter().filter(|s| s.get("type") != Some(&"null".into())).collect();
        if rest.len() == 1
            && let Value::Object(inner) = rest[0].clone()
        {
            o.remove("anyOf");
            for (k, v) in inner {
                o.entry(k).or_insert(v);
            }
        }
    }
    if let Some(Value::Array(e)) = o.get_mut("enum") {
        e.retain(|v| !v.is_null());
    }
    Value::Object(o)
}

/// What a field takes, from its description: the phrase before the first `;`, ` (` or `, e.g.`,
/// starting lower case ("Words to search for; …" → "words to search for").
fn what(spec: &Value) -> String {
    let d = spec.get("description").and_then(Value::as_str).unwrap_or("a value");
    let end = [";", " (", ", e.g.", ". "]
        .iter()
        .filter_map(|p| d.find(p))
        .min()
        .unwrap_or(d.len());
    let phrase = d[..end].trim_end_matches('.');
    let mut chars = phrase.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if !second.is_uppercase() => format!("{}{}", first.to_lowercase(), &phrase[1..]),
        _ => phrase.to_string(),
    }
}

fn invalid(field: &str, value: &Value, valid: &str) -> Error {
    let shown = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    // A hostile value is named, not echoed whole.
    let mut shown: String = shown.chars().take(80).collect();
    if shown.chars().count() >= 80 {
        shown.push('…');
    }
    Error::invalid(format!("{field}: `{shown}` is not valid; valid: {valid}"))
}

fn number(n: Option<&Value>) -> Option<f64> {
    n.and_then(Value::as_f64)
}

fn range(spec: &Value, noun: &str) -> String {
    let show = |n: f64| match n.fract() == 0.0 && n.abs() < 1e15 {
        true => format!("{}", n as i64),
        false => n.to_string(),
    };
    match (number(spec.get("minimum")), number(spec.get("maximum"))) {
        (Some(lo), Some(hi)) => format!("{noun} from {} to {}", show(lo), show(hi)),
        (Some(lo), None) => format!("{noun} of at least {}", show(lo)),
        (None, Some(hi)) => format!("{noun} of at most {}", show(hi)),
        (None, None) => noun.to_string(),
    }
}

fn in_range(spec: &Value, n: f64) -> bool {
    number(spec.get("minimum")).is_none_or(|lo| n >= lo) && number(spec.get("maximum")).is_none_or(|hi| n <= hi)
}

/// Checks `args` against `schema` (an [`input`] schema) and brings them to the form the input
/// type reads: `null` and blank optional strings are left out, enum values take the schema's
/// case. Fields in `engine_checked` are only bounded in size: the engine checks them with the
/// error codes the seeds give.
pub fn check(tool: &str, schema: &JsonObject, args: &mut JsonObject, engine_checked: &[&str]) -> Result<(), Error> {
    let empty = Map::new();
    let props = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    if let Some(unknown) = args.keys().find(|k| !props.contains_key(*k)) {
        let known: Vec<&str> = props.keys().map(String::as_str).collect();
        return Err(Error::invalid(format!(
            "{unknown}: not an argument of {tool}; valid: {}",
            known.join(", ")
        )));
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (field, spec) in props {
        let is_required = required.contains(&field.as_str());
        if let Some(Value::String(s)) = args.get(field) {
            let chars = s.chars().count();
            if chars > MAX_ARG_CHARS {
                return Err(Error::invalid(format!(
                    "{field}: {chars} characters is longer than {MAX_ARG_CHARS}; give less"
                )));
            }
        }
        if engine_checked.contains(&field.as_str()) {
            continue;
        }
        let value = match args.get(field) {
            None | Some(Value::Null) => {
                args.remove(field);
                if is_required {
                    return Err(Error::invalid(format!("{field}: missing; give {}", what(spec))));
                }
                continue;
            }
            Some(v) => v.clone(),
        };
        let kind = spec.get("type").and_then(Value::as_str).unwrap_or("");
        let enumerated: Option<Vec<&str>> = spec
            .get("enum")
            .and_then(Value::as_array)
            .map(|e| e.iter().filter_map(Value::as_str).collect());
        match (kind, &value) {
            ("string", Value::String(s)) => {
                if let Some(values) = &enumerated {
                    let found = values.iter().find(|v| v.eq_ignore_ascii_case(s.trim()));
                    match found {
                        Some(v) => args.insert(field.clone(), Value::String(v.to_string())),
                        None => return Err(invalid(field, &value, &values.join(", "))),
                    };
                } else if s.trim().is_empty() {
                    // `minLength: 0` says empty is a value of its own (a task's whole note).
                    if is_required && spec.get("minLength") == Some(&Value::from(0)) {
                        continue;
                    }
                    if is_required {
                        return Err(Error::invalid(format!("{field}: empty; give {}", what(spec))));
                    }
                    args.remove(field);
                }
            }
            ("string", _) => {
                let valid = enumerated.map(|v| v.join(", ")).unwrap_or_else(|| what(spec));
                return Err(invalid(field, &value, &valid));
            }
            ("integer", v) => {
                let whole = v.as_i64().map(|n| n as f64).or_else(|| v.as_u64().map(|n| n as f64));
                if !whole.is_some_and(|n| in_range(spec, n)) {
                    return Err(invalid(field, &value, &range(spec, "an integer")));
                }
            }
            ("number", v) if !v.as_f64().is_some_and(|n| in_range(spec, n)) => {
                return Err(invalid(field, &value, &range(spec, "a number")));
            }
            ("boolean", Value::Bool(_)) => {}
            ("boolean", _) => return Err(invalid(field, &value, "true or false")),
            _ => {}
        }
    }
    Ok(())
}

/// The arguments as the tool's input type, after [`check`].
pub fn read<T: serde::de::DeserializeOwned>(args: JsonObject) -> Result<T, Error> {
    serde_json::from_value(Value::Object(args)).map_err(|e| Error::invalid(format!("arguments: {e}")))
}

/// The schema of a string field that takes one of `values` (for `schema_with`).
pub fn one_of(values: &[&str], description: &str) -> Schema {
    let mut s = Schema::default();
    s.insert("type".into(), "string".into());
    s.insert(
        "enum".into(),
        values.iter().map(|v| Value::String(v.to_string())).collect(),
    );
    s.insert("description".into(), description.into());
    s
}

#[cfg(test)]
mod tests;
