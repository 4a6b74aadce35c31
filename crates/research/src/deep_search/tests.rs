//! Tests of deep_search.

use super::*;

mod cases {
    use super::*;

    #[test]
    fn round_parsing() {
        let check = |text: &str, ok: bool| assert_eq!(parse_round(text).is_ok(), ok, "{text}");
        check(r#"{"verified": true, "report": "x"}"#, true);
        check(
            "```json\n{\"success\": true, \"verified\": false, \"report\": \"# R\", \"metadata\": {\"sources_visited\": [\"https://a\"]}}\n```",
            true,
        );
        check("Here you go: {\"verified\": false, \"result\": \"alias\"} done", true);
        check(r#"{"verified": true, "report": "  "}"#, false);
        check(r#"{"success": false, "verified": false, "report": "x"}"#, false);
        check("The answer is 42.", false);
        check(r#"{"verified": true, "report": "unterminated"#, false);
        let r = parse_round(r#"{"verified": true, "report": "x", "metadata": {"search_queries": ["q"]}}"#).unwrap();
        assert_eq!(r.metadata.search_queries_used, ["q"]);
        // The example the prompts show is itself a valid answer.
        assert!(parse_round(&schema_example()).is_ok());
    }

    #[test]
    fn headings_and_dedupe() {
        assert_eq!(heading_for("  what is\n  sourdough?  "), "what is sourdough?");
        assert_eq!(heading_for("## rye"), "rye");
        assert_eq!(heading_for("- How long? "), "How long?");
        assert_eq!(heading_for("> * quoted item"), "quoted item");
        assert_eq!(heading_for(&"a".repeat(200)).chars().count(), 121);
        let v = [
            "https://a".to_string(),
            "https://A".into(),
            "https://b".into(),
            " ".into(),
        ];
        assert_eq!(dedupe(v.iter()), ["https://a", "https://b"]);
        assert_eq!(summary_of(None, "short  report\ntext"), "short report text");
        assert_eq!(summary_of(Some("s".into()), "r"), "s");
    }
}
