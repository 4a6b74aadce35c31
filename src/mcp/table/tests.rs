//! What every tool in the table must be, checked over the whole table, so a new tool cannot
//! ship without it.

use std::collections::HashSet;

use serde_json::Value;

use super::*;

/// Every schema node with a `type`, with its JSON path.
fn nodes<'a>(v: &'a Value, path: String, out: &mut Vec<(String, &'a Value)>) {
    match v {
        Value::Object(o) => {
            if o.contains_key("type") || o.contains_key("oneOf") || o.contains_key("anyOf") {
                out.push((path.clone(), v));
            }
            for (k, child) in o {
                nodes(child, format!("{path}/{k}"), out);
            }
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, c)| nodes(c, format!("{path}/{i}"), out)),
        _ => {}
    }
}

fn plain_text(s: &str) -> bool {
    !s.is_empty() && s.trim() == s && !s.contains("  ") && !s.contains('\n')
}

#[test]
fn names_are_unique_and_every_tool_is_described() {
    let tools = list();
    assert_eq!(tools.len(), TOOLS.len());
    let unique: HashSet<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(unique.len(), tools.len(), "duplicate tool names: {:?}", names());
    for t in &tools {
        let name = t.name.as_ref();
        assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}");
        let description = t.description.as_deref().unwrap_or_default();
        assert!(plain_text(description), "{name}: description {description:?}");
        assert!(
            description.len() >= 40,
            "{name}: a description says when to use the tool"
        );
        assert!(t.title.as_deref().is_some_and(plain_text), "{name}: title");
        let a = t.annotations.as_ref().expect("annotations");
        assert!(
            a.read_only_hint.is_some() && a.open_world_hint.is_some(),
            "{name}: hints"
        );
        assert!(find(name).is_some());
    }
}

#[test]
fn input_schemas_refuse_unknown_arguments_and_describe_every_property() {
    for t in list() {
        let name = t.name.as_ref();
        let s = Value::Object((*t.input_schema).clone());
        assert_eq!(s["type"], "object", "{name}");
        assert_eq!(s["additionalProperties"], false, "{name}");
        let props = s["properties"].as_object().expect("properties");
        for (field, spec) in props {
            let d = spec["description"].as_str().unwrap_or_default();
            assert!(plain_text(d), "{name}.{field}: description {d:?}");
            if spec["type"] == "string" {
                assert!(spec["maxLength"].is_u64(), "{name}.{field}: strings are bounded");
            }
        }
        for r in s["required"].as_array().into_iter().flatten() {
            assert!(
                props.contains_key(r.as_str().unwrap()),
                "{name}: required {r} is a property"
            );
        }
        let text = s.to_string();
        for banned in ["$ref", "$schema", "$defs", "\"null\"", "uint", "int32", "int64"] {
            assert!(!text.contains(banned), "{name}: input schema has {banned}: {text}");
        }
    }
}

#[test]
fn output_schemas_are_objects_every_client_can_validate() {
    for t in list() {
        let name = t.name.as_ref();
        let s = Value::Object((*t.output_schema.clone().expect("every tool declares its output")).clone());
        assert_eq!(s["type"], "object", "{name}");
        assert!(
            s["properties"].as_object().is_some_and(|p| !p.is_empty()),
            "{name}: a real schema, not {{\"type\": \"object\"}}"
        );
        let text = s.to_string();
        for banned in ["$ref", "$schema", "$defs", "uint", "int32", "int64"] {
            assert!(!text.contains(banned), "{name}: output schema has {banned}: {text}");
        }
        let mut all = Vec::new();
        nodes(&s, String::new(), &mut all);
        for (path, node) in all {
            if let Some(d) = node.get("description").and_then(Value::as_str) {
                assert!(plain_text(d), "{name}{path}: description {d:?}");
            }
        }
    }
}

#[test]
fn a_call_with_an_unknown_argument_names_it_and_the_valid_ones() {
    for entry in TOOLS {
        let t = entry.describe();
        let mut args = JsonObject::new();
        args.insert("frobnicate".into(), Value::Bool(true));
        let err = schema::check(entry.name(), &t.input_schema, &mut args, &[]).unwrap_err();
        assert!(err.message.contains("frobnicate"), "{}: {}", entry.name(), err.message);
        let props = t.input_schema.get("properties").and_then(Value::as_object).unwrap();
        if let Some(first) = props.keys().next() {
            assert!(
                err.message.contains(first.as_str()),
                "{}: names the valid ones: {}",
                entry.name(),
                err.message
            );
        }
    }
}

#[test]
fn long_text_is_cut_with_a_note() {
    let check = |text: &str, max: usize, expected: &str| assert_eq!(bounded(text, max), expected);
    check("short", 10, "short");
    check("ééé", 3, "ééé");
    check("abcdef", 3, "abc\n\n[… cut at 3 of 6 characters]");
}

#[test]
fn the_instructions_name_every_tool_offered_and_no_other() {
    let all = names();
    let text = crate::mcp::instructions(&all);
    for name in &all {
        assert!(
            text.contains(&format!("- {name}: ")),
            "the server instructions never mention {name}"
        );
    }
    assert!(text.contains("note:///"));
    let some = crate::mcp::instructions(&["fetch_page"]);
    assert!(some.contains("- fetch_page: "), "{some}");
    for name in all.iter().filter(|n| **n != "fetch_page") {
        assert!(
            !some.contains(&format!("- {name}:")),
            "{name} is not offered but named: {some}"
        );
    }
    assert!(
        !some.contains("note:///") && !some.contains("Prefer the vault"),
        "{some}"
    );
}
