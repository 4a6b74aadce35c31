//! What the fake model answers to each of scholia's prompts, read from the prompt itself: a
//! note's topics, a page's extract, a synthesis, a deep-search round, and the chat completion
//! that carries an answer.

use serde_json::{Value, json};

use super::behaviour::Behaviour;

/// A deep_search round from the material in the prompt: cites the pages it was given, verifies
/// from round `verify-at` (default 2).
pub(super) fn deep_round(prompt: &str, b: &Behaviour) -> String {
    if b.has("echo-example") {
        // What a 270M model answered: the schema example the prompt shows, verbatim.
        return serde_json::json!({"success": true, "verified": true,
            "report": "## Answer\n\nMarkdown report citing [sources](https://example.org/page) inline…",
            "metadata": {"sources_visited": ["https://example.org/page"], "search_queries_used": ["first search query"],
                         "summary": "One or two sentences: what the report concludes (or what this round changed)."}})
        .to_string();
    }
    let query = data_block(prompt, "user query").unwrap_or("?");
    let round: u64 = prompt
        .split("verification round ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let pages: Vec<String> = prompt
        .lines()
        .filter(|l| l.starts_with("<untrusted-data source=\"web page\""))
        .filter_map(|l| attr_of(l, "url"))
        .collect();
    let mut report = format!("## {query}\n\nRound {round} findings.");
    for p in pages.iter().take(2) {
        report.push_str(&format!(" See [this page]({p})."));
    }
    if b.has("hallucinate") {
        report.push_str(" Also [an invented source](https://invented.example/made-up).");
    }
    let verified = round >= b.num("verify-at").unwrap_or(2);
    json!({
        "success": true,
        "verified": verified,
        "report": report,
        "metadata": {"sources_visited": pages, "search_queries_used": [], "summary": format!("Round {round} summary.")}
    })
    .to_string()
}

pub(super) fn completion(model: &str, content: Value, prompt_tokens: u64) -> Value {
    let completion_tokens = content.as_str().map(|c| c.len() / 4).unwrap_or(0) as u64;
    json!({
        "id": format!("chatcmpl-fake-{}", fastrand::u32(..)),
        "object": "chat.completion",
        "created": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
    })
}

/// The value of attribute `name` in a prompt line (`name="…"`, escaped as scholia escapes it).
fn attr_of(line: &str, name: &str) -> Option<String> {
    let start = line.find(&format!("{name}=\""))? + name.len() + 2;
    let end = start + line[start..].find('"')?;
    Some(
        line[start..end]
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}

/// The text inside the first `<untrusted-data source="{source}" …>` block of `text`.
pub(super) fn data_block<'t>(text: &'t str, source: &str) -> Option<&'t str> {
    let open = text.find(&format!("<untrusted-data source=\"{source}\""))?;
    let start = open + text[open..].find('>')? + 1;
    let end = start + text[start..].find("</untrusted-data>")?;
    Some(text[start..end].trim())
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .collect()
}

/// Topics from the note's list items (claims, or questions when they end with `?`) and
/// headings (concepts), narrowed by the focus line when there is one.
pub(super) fn topics_json(prompt: &str, b: &Behaviour) -> Value {
    if b.has("no-topics") {
        return json!({"topics": []});
    }
    if b.has("too-many-topics") {
        let topics: Vec<Value> = (1..=14)
            .map(|i| json!({"topic": format!("Topic number {i}"), "context": format!("Point {i} of the note"), "type": "concept"}))
            .collect();
        return json!({"topics": topics});
    }
    let note = data_block(prompt, "note").unwrap_or("");
    let focus = data_block(prompt, "focus").map(words).unwrap_or_default();
    let mut topics = Vec::new();
    let mut in_frontmatter = note.starts_with("---");
    for (i, line) in note.lines().enumerate() {
        let l = line.trim();
        if in_frontmatter {
            in_frontmatter = !(i > 0 && l == "---");
            continue;
        }
        let (text, kind) = if let Some(item) = l.strip_prefix("- ").or_else(|| l.strip_prefix("* ")) {
            (item, if item.ends_with('?') { "question" } else { "claim" })
        } else if let Some(h) = l.strip_prefix("## ").or_else(|| l.strip_prefix("### ")) {
            (h, "concept")
        } else {
            continue;
        };
        let clean: String = text.replace(['[', ']', '*', '`'], "");
        let label: Vec<&str> = clean.split_whitespace().take(6).collect();
        let label = label.join(" ").trim_end_matches(['.', ',', ';', ':', '?']).to_string();
        if label.is_empty() {
            continue;
        }
        if !focus.is_empty() && !words(&clean).iter().any(|w| focus.contains(w)) {
            continue;
        }
        topics.push(json!({"topic": label, "context": clean.trim(), "type": kind}));
    }
    if topics.is_empty() && focus.is_empty() {
        // No lists or headings: the first sentences are the claims.
        let body: String = note
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("---"))
            .collect::<Vec<_>>()
            .join(" ");
        for sentence in body
            .split(". ")
            .map(str::trim)
            .filter(|s| s.split_whitespace().count() >= 4)
            .take(3)
        {
            let label: Vec<&str> = sentence.split_whitespace().take(6).collect();
            topics.push(
                json!({"topic": label.join(" ").trim_end_matches(['.', ',']), "context": sentence, "type": "claim"}),
            );
        }
    }
    topics.truncate(12);
    json!({"topics": topics})
}

pub(super) fn page_extract(prompt: &str) -> String {
    let topic = data_block(prompt, "topic")
        .map(|t| t.split_once(" (").map_or(t, |(t, _)| t))
        .unwrap_or("");
    let page = data_block(prompt, "web page").unwrap_or("");
    let topic_words = words(topic);
    let relevant: Vec<&str> = page
        .split(['.', '\n'])
        .map(str::trim)
        .filter(|s| s.len() > 30 && words(s).iter().any(|w| topic_words.contains(w)))
        .take(3)
        .collect();
    if relevant.is_empty() {
        return "NOTHING RELEVANT".into();
    }
    relevant
        .iter()
        .map(|s| format!("- {s}."))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One `### Topic` per gathered topic, citing its first web source and vault note.
pub(super) fn synthesis(prompt: &str, b: &Behaviour) -> String {
    let mut out = String::new();
    let mut contradicted = false;
    let material = prompt
        .split_once("Material gathered per topic:")
        .map(|(_, m)| m)
        .unwrap_or("");
    for (i, section) in material.split("\n## Topic ").skip(1).enumerate() {
        let title = data_block(section, "topic")
            .and_then(|t| t.lines().next())
            .unwrap_or("")
            .trim();
        let kind = section
            .lines()
            .find(|l| l.starts_with("<untrusted-data source=\"topic\""))
            .and_then(|l| attr_of(l, "type"))
            .unwrap_or_default();
        let lines: Vec<&str> = section.lines().collect();
        let fence = |source: &str| {
            let open = format!("<untrusted-data source=\"{source}\"");
            lines.iter().find(|l| l.starts_with(&open)).copied()
        };
        let web = fence("web search result").and_then(|l| {
            let (url, name) = (attr_of(l, "url")?, attr_of(l, "title").unwrap_or_default());
            Some(format!("[{name}]({url})"))
        });
        let vault = fence("vault note")
            .and_then(|l| attr_of(l, "target"))
            .map(|t| format!("[[{t}]]"));
        let web = web.as_deref();
        let vault = vault.as_deref();
        if web.is_none() && vault.is_none() {
            continue;
        }
        out.push_str(&format!("### {title}\n\n"));
        if let Some(link) = web {
            out.push_str(&format!("The web has more on {title}: see {link}.\n"));
            if !contradicted && kind == "claim" {
                contradicted = true;
                out.push_str(&format!(
                    "\n**Contradiction:** the note's claim about {title} is disputed by {link}.\n"
                ));
            }
        }
        if let Some(link) = vault {
            out.push_str(&format!("\nRelated in the vault: {link}.\n"));
        }
        if b.has("hallucinate") && i == 0 {
            out.push_str(
                "\nSee also [a study that does not exist](https://invented.example/study) and [[Imaginary Note]].\n",
            );
        }
        out.push('\n');
    }
    if b.has("hostile-links") {
        // Links and blocks that would act outside the section: definitions that repoint the
        // note's own links, schemes in every spelling, plugin code, a tracking pixel.
        out.push_str(
            "See the [guide] and ![pixel][px] and [x](https&#58;//evil.example/entity) and [y](HTTPS://EVIL.example/upper).\n\n\
             Autolinks: <javascript:alert(1)> <obsidian://open?vault=v&file=secret> <file:///etc/passwd> <HTTPS://evil.example/a> <ftp://evil.example/f>.\n\n\
             Bare obsidian://open?vault=v and https://evil.example/bare here.\n\n\
             ```dataviewjs\ndv.el('b', app.vault.getFiles().length)\n```\n\n\
             Inline `$= dv.pages().length` and `= this.file.name`.\n\n\
             [^1]: a footnote that lands at the end of the note\n\n\
             [guide]: HTTPS://evil.example/guide\n[px]: https://evil.example/pixel.gif\n",
        );
    }
    if let Some(n) = b.num("long-synthesis") {
        // Distinct sentences (a repeated one would be refused as a loop).
        out.push_str("\n\n");
        let mut i = 0u64;
        while out.len() < n as usize {
            i += 1;
            out.push_str(&format!(
                "Jar {i} rose {} mm in {} hours at {} degrees. ",
                i + 3,
                i + 1,
                i + 2
            ));
        }
    }
    if b.has("hostile") {
        // An answer that tries every way out of its section.
        out.push_str(
            "## Escaped section\n\nSetext heading\n===\n\n<div>\n# raw html\n</div>\n\n<!-- a comment that hides\n\n\
             ![[Private note]] and > [!danger] and %% hidden and $$ math\n\n<script>alert(1)</script>\n\n```rust\nunclosed fence\n",
        );
    }
    if out.is_empty() {
        "Nothing useful was found for these topics.".into()
    } else {
        out.trim_end().to_string()
    }
}
