use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::*;

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Example {
    /// Words to search for; "quoted phrase" for exact wording
    query: String,
    /// How many at most
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    limit: u32,
    /// Give up after this many hours
    #[schemars(range(min = 0.1, max = 72.0))]
    hours: Option<f64>,
    /// A desktop notification when it ends
    notify: Option<bool>,
    /// How deep
    depth: Option<Depth>,
    /// An http(s) URL
    url: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Depth {
    Shallow,
    Deep,
}

#[test]
fn input_schemas_are_plain() {
    let s = Value::Object(input::<Example>());
    assert_eq!(s["additionalProperties"], false);
    assert_eq!(s["required"], json!(["query"]));
    assert!(s.get("$schema").is_none());
    let p = &s["properties"];
    assert_eq!(
        p.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["query", "limit", "hours", "notify", "depth", "url"],
        "declaration order"
    );
    assert_eq!(
        p["limit"],
        json!({"type": "integer", "minimum": 1, "maximum": 50, "default": 0, "description": "How many at most"})
    );
    assert_eq!(p["hours"]["type"], "number", "optional without null: {}", p["hours"]);
    assert_eq!(p["depth"]["enum"], json!(["shallow", "deep"]), "{}", p["depth"]);
    assert_eq!(p["depth"]["description"], "How deep");
    assert_eq!(p["query"]["maxLength"], MAX_ARG_CHARS);
    let text = s.to_string();
    assert!(!text.contains("uint32") && !text.contains("\"null\""), "{text}");
}

#[test]
fn every_problem_names_the_field_and_what_is_valid() {
    let schema = input::<Example>();
    let check = |args: Value, expected: Result<Value, &str>| {
        let mut map = args.as_object().cloned().unwrap();
        let got = super::check("example", &schema, &mut map, &[]).map(|_| Value::Object(map));
        match (got, expected) {
            (Ok(v), Ok(e)) => assert_eq!(v, e, "{args}"),
            (Err(e), Err(m)) => assert_eq!(e.message, m, "{args}"),
            (got, want) => panic!("{args}: got {got:?}, want {want:?}"),
        }
    };
    check(json!({"query": "x"}), Ok(json!({"query": "x"})));
    check(json!({}), Err("query: missing; give words to search for"));
    check(json!({"query": null}), Err("query: missing; give words to search for"));
    check(json!({"query": " "}), Err("query: empty; give words to search for"));
    check(
        json!({"query": 3}),
        Err("query: `3` is not valid; valid: words to search for"),
    );
    check(
        json!({"query": "x", "lmit": 3}),
        Err("lmit: not an argument of example; valid: query, limit, hours, notify, depth, url"),
    );
    check(
        json!({"query": "x", "limit": 0}),
        Err("limit: `0` is not valid; valid: an integer from 1 to 50"),
    );
    check(
        json!({"query": "x", "limit": 2.5}),
        Err("limit: `2.5` is not valid; valid: an integer from 1 to 50"),
    );
    check(
        json!({"query": "x", "limit": "ten"}),
        Err("limit: `ten` is not valid; valid: an integer from 1 to 50"),
    );
    check(
        json!({"query": "x", "limit": -1}),
        Err("limit: `-1` is not valid; valid: an integer from 1 to 50"),
    );
    check(
        json!({"query": "x", "hours": 0}),
        Err("hours: `0` is not valid; valid: a number from 0.1 to 72"),
    );
    check(
        json!({"query": "x", "hours": 1.5}),
        Ok(json!({"query": "x", "hours": 1.5})),
    );
    check(
        json!({"query": "x", "notify": "yes"}),
        Err("notify: `yes` is not valid; valid: true or false"),
    );
    check(
        json!({"query": "x", "depth": "Deep"}),
        Ok(json!({"query": "x", "depth": "deep"})),
    );
    check(
        json!({"query": "x", "depth": "medium"}),
        Err("depth: `medium` is not valid; valid: shallow, deep"),
    );
    check(
        json!({"query": "x", "depth": 2}),
        Err("depth: `2` is not valid; valid: shallow, deep"),
    );
    check(
        json!({"query": "x", "url": " ", "notify": null}),
        Ok(json!({"query": "x"})),
    );
    check(
        json!({"query": "x", "url": 1}),
        Err("url: `1` is not valid; valid: an http(s) URL"),
    );
    let long = "y".repeat(MAX_ARG_CHARS + 1);
    check(
        json!({"query": long}),
        Err("query: 200001 characters is longer than 200000; give less"),
    );
    check(json!({"query": "x".repeat(100)}), Ok(json!({"query": "x".repeat(100)})));
    let hostile = "z".repeat(500);
    let mut map = json!({"query": "x", "depth": hostile}).as_object().cloned().unwrap();
    let e = super::check("example", &schema, &mut map, &[]).unwrap_err();
    assert!(
        e.message.chars().count() < 200,
        "a hostile value is not echoed whole: {}",
        e.message
    );
}

#[test]
fn engine_checked_fields_are_only_bounded() {
    let schema = input::<Example>();
    let mut map = json!({"query": 3}).as_object().cloned().unwrap();
    assert!(super::check("example", &schema, &mut map, &["query"]).is_ok());
    let mut map = json!({"query": "q".repeat(MAX_ARG_CHARS + 1)})
        .as_object()
        .cloned()
        .unwrap();
    assert!(super::check("example", &schema, &mut map, &["query"]).is_err());
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Documented {
    /// Which one
    kind: Option<Kind>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
enum Kind {
    /// The first
    First,
    /// The second one
    SecondOne,
}

#[test]
fn enums_with_documented_variants_are_enums_the_check_reads() {
    let schema = input::<Documented>();
    let kind = &schema["properties"]["kind"];
    assert_eq!(kind["enum"], json!(["first", "second-one"]), "{kind}");
    assert_eq!(kind["type"], "string");
    assert_eq!(kind["description"], "Which one");
    let mut args = json!({"kind": "third"}).as_object().cloned().unwrap();
    let e = check("documented", &schema, &mut args, &[]).unwrap_err();
    assert_eq!(e.message, "kind: `third` is not valid; valid: first, second-one");
}
