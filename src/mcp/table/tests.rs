//! What every tool in the table must be, checked over the whole table, so a new tool cannot
//! ship without it.

use std::collections::HashSet;

use serde_json::Value;

use super::*;
use crate::mcp::tool::bounded;

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

/// A value a call may give `field` of `spec`: the first of an enum, the least of a range, a
/// path, a URL, or a plain word.
fn sample(field: &str, spec: &Value) -> Value {
    if let Some(first) = spec["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match (field, spec["type"].as_str()) {
        ("path", _) => "Ideas/Koji.md".into(),
        ("to", _) => "Ideas/Koji rice.md".into(),
        ("url", _) => "https://example.org/koji".into(),
        (_, Some("integer" | "number")) => spec["minimum"].clone(),
        (_, Some("boolean")) => false.into(),
        _ => "koji".into(),
    }
}

#[test]
fn exactly_the_required_arguments_make_a_valid_call() {
    for entry in TOOLS {
        let t = entry.describe();
        let props = t.input_schema["properties"].as_object().unwrap();
        let mut args = JsonObject::new();
        for r in t
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let r = r.as_str().unwrap();
            args.insert(r.into(), sample(r, &props[r]));
        }
        if let Err(e) = entry.parse(args.clone()) {
            panic!("{}: {args:?} is refused: {}", entry.name(), e.message);
        }
    }
}

/// What the engine applies to each argument a call leaves out, where that is a constant.
fn engine_defaults() -> Vec<(&'static str, &'static str, Value)> {
    use scholia_engine::defaults as d;
    vec![
        ("find_notes", "limit", d::SEARCH_LIMIT.into()),
        ("list_notes", "limit", d::LIST_LIMIT.into()),
        ("list_notes", "offset", 0.into()),
        ("read_note", "offset", 0.into()),
        ("read_note", "outline", false.into()),
        ("fetch_page", "max_chars", d::PAGE_CHARS.into()),
        ("research_note", "depth", "shallow".into()),
        ("edit_note", "mode", "append".into()),
        ("edit_note", "content", "".into()),
        ("create_note", "content", "".into()),
        ("start_deep_research", "enable_notifications", d::NOTIFY.into()),
        ("start_deep_research", "max_wait_hours", d::MAX_WAIT_HOURS.into()),
        ("get_research_results", "include_sources", d::INCLUDE_SOURCES.into()),
        ("cancel_research", "save_partial", d::SAVE_PARTIAL.into()),
        ("save_research_to_markdown", "output_dir", d::REPORT_DIR.into()),
        ("save_research_to_markdown", "filename_prefix", d::REPORT_PREFIX.into()),
        (
            "save_research_to_markdown",
            "include_metadata",
            d::REPORT_METADATA.into(),
        ),
        ("save_research_to_markdown", "include_sources", d::REPORT_SOURCES.into()),
    ]
}

#[test]
fn every_default_a_schema_lists_is_the_one_the_engine_applies() {
    let table = engine_defaults();
    let mut listed = Vec::new();
    for t in list() {
        let props = t.input_schema["properties"].as_object().unwrap();
        for (field, spec) in props {
            let Some(shown) = spec.get("default") else { continue };
            listed.push((t.name.to_string(), field.clone()));
            let applied = table
                .iter()
                .find(|(tool, f, _)| *tool == t.name.as_ref() && f == field)
                .unwrap_or_else(|| panic!("{}.{field}: default {shown} is not one the engine applies", t.name));
            assert_eq!(shown, &applied.2, "{}.{field}", t.name);
            let required = t.input_schema.get("required").and_then(Value::as_array);
            assert!(
                !required.is_some_and(|r| r.iter().any(|r| r == field)),
                "{}.{field}: a defaulted argument is optional",
                t.name
            );
        }
    }
    for (tool, field, _) in &table {
        assert!(
            listed.iter().any(|(t, f)| t == tool && f == field),
            "{tool}.{field}: the schema does not show the engine's default"
        );
    }
    // What the schema cannot list as a constant: the Sonar tier and its deadline come from
    // the engine's settings and the model table.
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_string_lossy().into_owned();
    let env = std::collections::HashMap::from([("HOME".to_string(), home)]);
    let engine = scholia_engine::Engine::load(&env, None, None).unwrap();
    assert_eq!(engine.sonar_tier(None), "sonar");
    let req = scholia_providers::sonar::AskRequest::new("koji", Some(engine.sonar_tier(None)), None).unwrap();
    assert_eq!(req.timeout_ms, req.model.timeout_ms);
    let search = list().into_iter().find(|t| t.name == "search").unwrap();
    let timeout = search.input_schema["properties"]["timeout"]["description"]
        .as_str()
        .unwrap();
    for m in scholia_research::sonar::MODELS {
        assert!(timeout.contains(&format!("{} {}", m.name, m.timeout_ms)), "{timeout}");
    }
}
