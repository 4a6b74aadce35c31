//! Tests of `inert`.

use super::*;

mod cases {
    use super::*;
    use crate::contain::check;

    fn gathered() -> Links {
        Links::from_urls(["https://real.example/a", "https://real.example/b"])
    }

    fn resolves(t: &str) -> bool {
        matches!(t.to_lowercase().as_str(), "wild yeast" | "kombucha")
    }

    /// `input` made inert with the gathered links: the expected text and number removed; the
    /// result always passes the containment check.
    fn check_links(input: &str, expected: &str, expected_removed: usize) {
        let links = gathered();
        let (got, removed) = markdown(input, 3, &links, &resolves);
        assert_eq!(got, expected, "{input:?}");
        assert_eq!(removed.count(), expected_removed, "{input:?}: {removed:?}");
        check("Research", 2, &got, &links).unwrap_or_else(|e| panic!("{got:?}: {e}"));
    }

    #[test]
    fn citations() {
        check_links(
            "See [A](https://real.example/a).",
            "See [A](https://real.example/a).",
            0,
        );
        check_links(
            "See [A](https://real.example/a/#frag).",
            "See [A](https://real.example/a/#frag).",
            0,
        );
        check_links("See [Fake](https://invented.example/x).", "See Fake.", 1);
        check_links("![img](https://real.example/a) ok", "img ok", 1);
        check_links(
            "Bare https://invented.example/y, and https://real.example/b.",
            "Bare , and https://real.example/b.",
            1,
        );
        check_links("Auto <https://invented.example/z> link", "Auto  link", 1);
        check_links(
            "Notes: [[Wild yeast]], [[Kombucha#SCOBY|tea]], [[Imaginary]] and [[Ghost|boo]].",
            "Notes: [[Wild yeast]], [[Kombucha#SCOBY|tea]], Imaginary and boo.",
            2,
        );
        check_links("Embed ![[Nope]] here", "Embed Nope here", 1);
        check_links("Embed ![[Kombucha]] here", "Embed \\![[Kombucha]] here", 0);
        check_links("[not a link] and [x](", "\\[not a link] and \\[x](", 0);
        check_links(
            "Mixed [[Wild yeast]] [A](https://real.example/a) [B](http://evil/)",
            "Mixed [[Wild yeast]] [A](https://real.example/a) B",
            1,
        );
    }

    #[test]
    fn hostile_links() {
        // Reference definitions repoint the note's own links: escaped, whatever they define.
        check_links(
            "Text.\n\n[guide]: HTTPS://evil.example/guide\n",
            "Text.\n\n\\[guide]: \n",
            1,
        );
        check_links(
            "> [g]: https://real.example/a\n",
            "> \\[g]: https://real.example/a\n",
            0,
        );
        check_links("- [^1]: footnote\n", "- \\[^1]: footnote\n", 0);
        // A label spans lines; an escaped `]` or a nested `[` is not the end of one.
        check_links("[a\nb]: https://evil.example\n", "\\[a\nb]: \n", 1);
        check_links("- [[Kombucha]] — \\]: x\n", "- [[Kombucha]] — \\]: x\n", 0);
        check_links("[x\\]: y\n", "\\[x\\]: y\n", 0);
        check_links(
            "See [guide][g].\n\n[g]: https://evil.example\n",
            "See guide.\n\n\\[g]: \n",
            1,
        );
        check_links(
            "![pixel][px]\n\n[px]: https://real.example/a\n",
            "pixel\n\n\\[px]: https://real.example/a\n",
            1,
        );
        // Entities and case do not smuggle a scheme past the check.
        check_links("[x](https&#58;//evil.example/p)", "x", 1);
        check_links("[x](HTTPS://REAL.example/a)", "[x](HTTPS://REAL.example/a)", 0);
        check_links("[x](javascript:alert(1))", "x", 1);
        // Autolinks of any scheme but gathered http(s) go.
        for bad in [
            "<javascript:alert(1)>",
            "<obsidian://open?vault=x&file=y>",
            "<file:///etc/passwd>",
            "<HTTPS://evil.example/>",
            "<ftp://evil.example/x>",
            "<someone@example.org>",
        ] {
            check_links(&format!("a {bad} b"), "a  b", 1);
        }
        check_links("a <HTTPS://real.example/a> b", "a <HTTPS://real.example/a> b", 0);
        check_links("Footnote[^1] here", "Footnote\\[^1] here", 0);
        check_links("text https&#58;//evil.example/x end", "text end", 1);
        check_links("obsidian://open?vault=x bare", " bare", 1);
    }

    #[test]
    fn script_blocks_are_inert() {
        check_links("```dataviewjs\ndv.el('b', 1)\n```", "```text\ndv.el('b', 1)\n```", 0);
        check_links("~~~ DataView\nLIST\n~~~", "~~~text\nLIST\n~~~", 0);
        check_links("```query\nsecret\n```", "```text\nsecret\n```", 0);
        check_links("```rust\nfn x() {}\n```", "```rust\nfn x() {}\n```", 0);
        check_links("run `$= dv.pages().length` now", "run \\$= dv.pages().length now", 0);
        check_links("run `= this.file.name` now", "run \\= this.file.name now", 0);
        check_links("plain `code` stays", "plain `code` stays", 0);
    }

    #[test]
    fn made_safe() {
        let check_case = |input: &str, expected: &str| {
            let got = markdown_without_urls(input, 3);
            assert_eq!(got, expected, "{input:?}");
            check("Research", 2, &got, &Links::none()).unwrap_or_else(|e| panic!("{got:?}: {e}"));
        };
        check_case("## Topic\ntext", "### Topic\ntext");
        check_case("# Big\n### Fine", "### Big\n### Fine");
        check_case("Line\n---\nafter", "Line\n\n---\nafter");
        check_case("Line\n===\nafter", "Line\n\n===\nafter");
        // A setext heading whose text begins with `#` is no ATX heading to lower.
        check_case("#A\n=", "#A\n\n=");
        check_case("####### seven\n---", "####### seven\n\n---");
        check_case("#\tTab\n# ", "###\tTab\n### ");
        check_case("```rust\nfn x() {}\n", "```rust\nfn x() {}\n```");
        check_case("```\n## not a heading\n```", "```\n## not a heading\n```");
        check_case("#hashtag stays", "#hashtag stays");
        check_case("```rust\ncode\n```rust\n", "```rust\ncode\n```rust\n```");
        check_case("~~~\n## x\n", "~~~\n## x\n~~~");
        check_case("    ## indented code\n", "    ## indented code\n");
        check_case("<div>\n## Escape\n</div>", "\\<div>\n### Escape\n\\</div>");
        check_case("<!-- hide\n## rest", "\\<!-- hide\n### rest");
        check_case("a <script>x</script> b", "a \\<script>x\\</script> b");
        check_case("see ![[Secret]] and [[Public]]", "see \\![[Secret]] and [[Public]]");
        check_case("> [!warning] boo\n> text", "> \\[!warning] boo\n> text");
        check_case("%% hidden", "%&#37; hidden");
        check_case("$$ open math", "$&#36; open math");
        check_case("$$x$$ paired", "$$x$$ paired");
        check_case("a\rb\r## c", "a\nb\n### c");
    }

    #[test]
    fn capped_at_a_block() {
        let text = format!(
            "{}\n\n{}\n\n```\n{}\n```\n",
            "a".repeat(50),
            "b".repeat(50),
            "c\n\nc".repeat(30)
        );
        let (kept, cut) = cap(&text, 150);
        assert!(cut);
        assert_eq!(kept, format!("{}\n\n{}", "a".repeat(50), "b".repeat(50)));
        assert_eq!(cap("short", 10), ("short".to_string(), false));
        // One long paragraph after a short one: cut at a sentence, not at the first break.
        let text = format!("Intro.\n\n{}", "A sentence here. ".repeat(100));
        let (kept, cut) = cap(&text, 1000);
        assert!(cut && kept.len() > 900 && kept.ends_with("here."), "{kept}");
    }
}
