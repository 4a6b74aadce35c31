//! research_note end to end: the real binary against loopback fakes of the LLM, DuckDuckGo and
//! the web, and the LLM layer's negotiation, retries and deadlines against the fake API.

use scholia_fakes::FakeServer;
use serde_json::{Value, json};

use crate::support::{TestVault, fake_env, fakes, stderr, stdout};

/// Runs the binary off the runtime (the fakes live on it).
async fn run(v: &TestVault, env: &[(String, String)], args: &[&str]) -> std::process::Output {
    v.cli(env, args).await
}

fn section(text: &str) -> &str {
    let start = text.find("## Research").expect("a Research section");
    &text[start..]
}

fn chat_requests(server: &FakeServer) -> Vec<Value> {
    server.requests("/v1/chat/completions")
}

fn task_count(server: &FakeServer, marker: &str) -> usize {
    chat_requests(server)
        .iter()
        .filter(|r| {
            r["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["content"].as_str().unwrap_or("").contains(marker))
        })
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn shallow_research_writes_a_cited_section() {
    let server = fakes().await;
    let v = TestVault::example();
    let before = v.read("Sourdough starter.md");
    let out = run(
        &v,
        &fake_env(&server, "fake"),
        &["research", "Sourdough starter.md", "--json"],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["mode"], "llm");
    assert_eq!(result["written"], true);
    assert_eq!(result["topics_researched"], 8, "{result}");
    assert_eq!(result["citations_removed"], 0);
    assert_eq!(result["usage"]["calls"], 2, "topics + synthesis");

    let after = v.read("Sourdough starter.md");
    // Everything before the section is byte-for-byte the original.
    assert_eq!(&after[..before.len()], before.as_str());
    let s = section(&after);
    assert!(s.contains("### "), "organised by topic: {s}");
    assert!(s.contains("**Contradiction:**"), "{s}");
    assert!(s.contains("**Sources**"), "{s}");
    assert!(s.contains("· shallow · fake ·"), "provenance: {s}");
    // Every web link in the section was a search result; every wikilink resolves.
    let gathered: Vec<String> = server
        .requests("/html/")
        .iter()
        .map(|r| r["q"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(gathered.len(), 8, "one web search per topic");
    for url in s.split("](").skip(1).map(|rest| rest.split(')').next().unwrap()) {
        assert!(url.starts_with(&format!("{}/pages/", server.base())), "cited {url}");
    }
    assert!(
        s.contains("[[Wild yeast]]") || s.contains("[[Lactic acid bacteria]]") || s.contains("[[Bread log]]"),
        "{s}"
    );
    assert_eq!(
        task_count(&server, "# Task: page extraction"),
        0,
        "shallow reads no pages"
    );

    // Running again replaces the section instead of adding a second one.
    let out = run(&v, &fake_env(&server, "fake"), &["research", "Sourdough starter.md"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let again = v.read("Sourdough starter.md");
    assert_eq!(again.matches("## Research").count(), 1);
    // The fake answers deterministically: the same section, so the file is left alone.
    assert_eq!(again, after);
    assert!(
        stdout(&out).starts_with("Unchanged `## Research` in Sourdough starter.md: 8 topics"),
        "{}",
        stdout(&out)
    );

    // A note whose owner wrote under `## Research`, with other sections after it: their words
    // stay, scholia's part follows them, and only that part is replaced when it runs again.
    v.write("Kombucha.md", "# Kombucha\n\nSweet tea fermented by a SCOBY of bacteria and yeast cultures.\n\n## Research\n\nmy own findings\n\n## Log\n\nkeep me\n");
    let out = run(&v, &fake_env(&server, "fake"), &["research", "Kombucha.md"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let k = v.read("Kombucha.md");
    assert!(
        k.starts_with(
            "# Kombucha\n\nSweet tea fermented by a SCOBY of bacteria and yeast cultures.\n\n## Research\n\nmy own findings\n\n<!-- scholia:research "
        ),
        "{k}"
    );
    assert!(
        k.ends_with("\n<!-- /scholia:research -->\n\n## Log\n\nkeep me\n"),
        "{k}"
    );
    let out = run(&v, &fake_env(&server, "fake"), &["research", "Kombucha.md"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(v.read("Kombucha.md"), k);
}

/// Research reads the owner's words of the vault, never a research section: another note's
/// section, full of this note's words, neither makes it vault evidence nor is quoted to the
/// model (issue 39: what research finds must not change as notes gain sections).
#[tokio::test(flavor = "multi_thread")]
async fn research_never_reads_another_note_s_research_section() {
    let server = fakes().await;
    let v = TestVault::example();
    let kombucha = v.read("Kombucha.md");
    v.write(
        "Kombucha.md",
        &format!(
            "{kombucha}\n## Research\n\n<!-- scholia:research run=r at=2026-11-29 depth=offline model=none sources=1 above=0 words=0 -->\n\
             QUOKKA-MARK sourdough starter flour hydration feeding hooch rye \
             wild yeast lactic acid bacteria fridge hands culture.\n\n<!-- /scholia:research -->\n"
        ),
    );
    let out = run(&v, &fake_env(&server, "fake"), &["research", "Sourdough starter.md"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let asked = chat_requests(&server);
    assert!(!asked.is_empty());
    for r in &asked {
        assert!(
            !r.to_string().contains("QUOKKA-MARK"),
            "a research section reached the model: {r}"
        );
    }
}

/// What the owner writes under `## Research` is theirs: it relates their note as any of
/// their words do, and the research on that note reads it.
#[test]
fn the_owner_s_words_under_research_count() {
    let v = TestVault::example();
    v.write(
        "Koji.md",
        "# Koji\n\nRice and a mould.\n\n## Research\n\nMy reading: zymurgy, aspergillus oryzae, amazake.\n",
    );
    v.write(
        "Zymurgy.md",
        "# Zymurgy\n\nZymurgy studies how aspergillus oryzae makes amazake sweet.\n",
    );
    for i in 0..8 {
        v.write(
            &format!("Tea {i}.md"),
            &format!("# Tea {i}\n\nGreen tea and black tea, steeped {i} minutes.\n"),
        );
    }
    let out = v.run(&["research", "Koji.md", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cited: Vec<&str> = result["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["path"].as_str())
        .collect();
    assert!(cited.contains(&"Zymurgy.md"), "{result}");
    let text = v.read("Koji.md");
    assert!(
        text.contains("## Research\n\nMy reading: zymurgy, aspergillus oryzae, amazake.\n\n<!-- scholia:research "),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn deep_research_reads_pages_and_skips_failures() {
    let server = fakes().await;
    let v = TestVault::example();
    v.write(
        "Fetching.md",
        "# Fetching\n\n- Edgecases of fetching pages matter.\n- Mozilla Firefox nightly builds.\n",
    );
    let out = run(
        &v,
        &fake_env(&server, "fake"),
        &["research", "Fetching.md", "--deep", "--json"],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings: Vec<&str> = result["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    // The edge-case topic's pages: a binary file and a 404 fail; nothing else is fatal.
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("page skipped") && w.contains("/binary")),
        "{warnings:?}"
    );
    assert!(warnings.iter().any(|w| w.contains("HTTP 404")), "{warnings:?}");
    // The other topic's two pages were read and extracted.
    assert!(task_count(&server, "# Task: page extraction") >= 2);
    let synthesis = chat_requests(&server)
        .into_iter()
        .find(|r| r.to_string().contains("# Task: synthesis"))
        .unwrap();
    assert!(
        synthesis.to_string().contains("Read from the page:"),
        "page extracts reach the synthesis"
    );
    assert!(v.read("Fetching.md").contains("· deep ·"));
}

/// A note written in German gets its findings asked for in German, and the section's own words
/// (the sources' label, the provenance line) in German; an English note's section is as it
/// was (`shallow_research_writes_a_cited_section`).
#[tokio::test(flavor = "multi_thread")]
async fn a_german_note_is_researched_in_german() {
    let server = fakes().await;
    // Researches `rel` with the fake LLM and returns the synthesis prompt it was sent.
    let synthesis_prompt = async |v: &TestVault, rel: &str| -> String {
        let out = run(v, &fake_env(&server, "fake"), &["research", rel, "--json"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        let mut requests = chat_requests(&server).into_iter();
        let prompt = requests.rfind(|r| r.to_string().contains("# Task: synthesis"));
        prompt.unwrap().to_string()
    };
    let v = TestVault::with_files(&[(
        "Sauerteig.md",
        "# Sauerteig\n\nDer Sauerteig ist eine Kultur aus Hefe und Milchsäurebakterien. Die Kultur wird mit Mehl und Wasser gefüttert, und das ist nicht schwer. Sie lebt im Kühlschrank eine Woche.\n",
    )]);
    let synthesis = synthesis_prompt(&v, "Sauerteig.md").await;
    assert!(
        synthesis.contains("Write in German, the language of the note."),
        "{synthesis}"
    );
    let s = section(&v.read("Sauerteig.md")).to_string();
    assert!(s.contains("**Quellen**") && !s.contains("**Sources**"), "{s}");
    assert!(
        s.contains("*Recherchiert am ") && s.contains(" · flach · fake · "),
        "{s}"
    );
    assert!(!s.contains("Researched "), "{s}");
    // The English example asks for no language.
    let english = synthesis_prompt(&TestVault::example(), "Sourdough starter.md").await;
    assert!(!english.contains("Write in "), "{english}");
}

#[tokio::test(flavor = "multi_thread")]
async fn focus_and_topic_cap() {
    let server = fakes().await;
    let v = TestVault::example();
    let out = run(
        &v,
        &fake_env(&server, "fake"),
        &["research", "Sourdough starter.md", "--focus", "fridge", "--json"],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["topics"], json!(["How long can a starter survive"]));
    let prompt = chat_requests(&server)[0].to_string();
    assert!(
        prompt.contains(
            "Only list topics about this focus (from the owner):\\n<untrusted-data source=\\\"focus\\\">\\nfridge"
        ),
        "{prompt}"
    );

    let out = run(
        &v,
        &fake_env(&server, "fake:too-many-topics"),
        &["research", "Kombucha.md", "--json"],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["topics_researched"], 10, "14 proposed, capped at 10");
}

#[tokio::test(flavor = "multi_thread")]
async fn hallucinated_citations_never_reach_the_note() {
    let server = fakes().await;
    let v = TestVault::example();
    let out = run(
        &v,
        &fake_env(&server, "fake:hallucinate"),
        &["research", "Kombucha.md", "--json"],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["citations_removed"], 2, "{result}");
    let note = v.read("Kombucha.md");
    assert!(
        !note.contains("invented.example") && !note.contains("[[Imaginary Note]]"),
        "{note}"
    );
    assert!(
        note.contains("a study that does not exist"),
        "the text stays, the link goes"
    );
    assert!(note.contains("2 unverifiable citations removed"));
}

#[tokio::test(flavor = "multi_thread")]
async fn failures_leave_the_note_untouched() {
    let server = fakes().await;
    let v = TestVault::example();
    v.write(
        "Dup.md",
        "# Dup\n\n- A claim about yeast.\n\n## Research\nold\n\n## research\nolder\n",
    );
    v.write("image.md", "");
    std::fs::write(v.path("image.md"), b"\x89PNG\r\n\x1a\n\0\0").unwrap();
    std::fs::write(v.path("paper.pdf"), b"%PDF-1.4").unwrap();
    v.write("Empty.md", "---\ntags: [x]\n---\n\n");
    let snapshot: Vec<(String, Vec<u8>)> = ["Dup.md", "image.md", "Empty.md", "Kombucha.md", "Sourdough starter.md"]
        .iter()
        .map(|p| (p.to_string(), std::fs::read(v.path(p)).unwrap()))
        .collect();
    let env = fake_env(&server, "fake");
    let check = |out: &std::process::Output, expected: &str| {
        assert_eq!(out.status.code(), Some(1), "{}", stderr(out));
        assert!(
            stderr(out).contains(expected),
            "expected `{expected}` in: {}",
            stderr(out)
        );
    };
    check(
        &run(&v, &env, &["research", "Dup.md"]).await,
        "the note has 2 `## Research` headings (lines 5, 8)",
    );
    assert_eq!(
        chat_requests(&server).len(),
        0,
        "a duplicate heading is refused before any LLM call"
    );
    check(
        &run(&v, &env, &["research", "image.md"]).await,
        "looks like a binary file",
    );
    check(
        &run(&v, &env, &["research", "paper.pdf"]).await,
        "`.pdf` files are not notes; valid extensions: .md, .markdown, .txt",
    );
    check(
        &run(&v, &env, &["research", "Empty.md"]).await,
        "note `Empty.md` is empty",
    );
    check(
        &run(&v, &env, &["research", "../outside.md"]).await,
        "`..` is not allowed",
    );
    check(
        &run(&v, &env, &["research", "/etc/hostname.md"]).await,
        "outside the vault",
    );
    // A note that is not there could not be read: status 4, as documented.
    let out = run(&v, &env, &["research", "Missing.md"]).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("no such note in the vault"), "{}", stderr(&out));
    let out = run(&v, &env, &["research", "Kombucha.md", "--depth", "medium"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("depth: `medium` is not valid; valid values: shallow, deep"),
        "{}",
        stderr(&out)
    );
    let long_focus = "fermentation ".repeat(30);
    check(
        &run(&v, &env, &["research", "Kombucha.md", "--focus", &long_focus]).await,
        "longer than the note itself",
    );
    // (A model with no usable topics: the note's key terms are researched, see local_models.rs.)
    // (A synthesis failing after gathering writes the sources: see local_models.rs.)
    check(
        &run(
            &v,
            &fake_env(&server, "fake:malformed-always"),
            &["research", "Kombucha.md"],
        )
        .await,
        "topic extraction failed: LLM answer is not the expected JSON",
    );
    let mut unreachable = env.clone();
    unreachable[0].1 = "http://127.0.0.1:9/v1".into();
    check(
        &run(&v, &unreachable, &["research", "Kombucha.md"]).await,
        "LLM at http://127.0.0.1:9/v1 is unreachable",
    );
    let mut bad = env.clone();
    bad[0].1 = "ftp://nowhere".into();
    check(
        &run(&v, &bad, &["research", "Kombucha.md"]).await,
        "SCHOLIA_LLM_BASE_URL: `ftp://nowhere` is not valid",
    );
    for (path, bytes) in snapshot {
        assert_eq!(std::fs::read(v.path(&path)).unwrap(), bytes, "{path} changed");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_source_failing_is_an_error() {
    let server = fakes().await;
    // One note only: the vault has nothing else, and every web search is rate-limited.
    let v = TestVault::with_files(&[(
        "Solo.md",
        "# Solo\n\n- Ratelimit everything here.\n- Ratelimit again here.\n",
    )]);
    let out = run(&v, &fake_env(&server, "fake"), &["research", "Solo.md"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("nothing was found for any topic (web search failed: DuckDuckGo: rate limited"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        v.read("Solo.md"),
        "# Solo\n\n- Ratelimit everything here.\n- Ratelimit again here.\n"
    );
}

#[test]
fn offline_mode_is_the_default() {
    let v = TestVault::example();
    let out = v.run(&["research", "Sourdough starter.md", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["mode"], "offline");
    assert_eq!(result["model"], Value::Null);
    let s = v.read("Sourdough starter.md");
    let s = section(&s);
    assert!(s.contains("Researched without a language model"), "{s}");
    // Leads with a note it does not link, with its passage; a note linking here comes last,
    // by name; notes it links are not repeated.
    assert!(s.contains("- [[Reading list]] —"), "{s}");
    assert!(s.contains("  > "), "matching passages: {s}");
    assert!(s.contains("Already linking here: [[Kombucha]]."), "{s}");
    assert!(
        !s.contains("[[Bread log]]") && !s.contains("[[Wild yeast]]"),
        "linked already: {s}"
    );
    assert!(!s.contains("[[Sourdough starter]]"), "never itself");
}

#[tokio::test(flavor = "multi_thread")]
async fn fetch_prints_markdown_and_refuses_private_hosts() {
    let server = fakes().await;
    let v = TestVault::example();
    let url = format!("{}/pages/wikipedia/", server.base());
    let out = run(
        &v,
        &[("SCHOLIA_ALLOW_PRIVATE_HOSTS".into(), "1".into())],
        &["fetch", &url],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("# Mozilla - Wikipedia"),
        "{}",
        &stdout(&out)[..200]
    );
    assert!(stderr(&out).contains("via Readability"), "{}", stderr(&out));

    // Without the test flag the loopback fake itself is refused, as are other schemes and
    // redirects into link-local space (even with the flag).
    let out = run(&v, &[], &["fetch", &url]).await;
    assert!(
        stderr(&out).contains("refused, 127.0.0.1 is a loopback address"),
        "{}",
        stderr(&out)
    );
    let out = run(&v, &[], &["fetch", "file:///etc/passwd"]).await;
    assert!(
        stderr(&out).contains("only http and https URLs are fetched"),
        "{}",
        stderr(&out)
    );
    let redirect = format!("{}/redirect?to=http://169.254.169.254/latest/meta-data", server.base());
    let out = run(
        &v,
        &[("SCHOLIA_ALLOW_PRIVATE_HOSTS".into(), "1".into())],
        &["fetch", &redirect],
    )
    .await;
    assert!(
        stderr(&out).contains("169.254.169.254 is a link-local address"),
        "{}",
        stderr(&out)
    );
    let out = run(
        &v,
        &[("SCHOLIA_ALLOW_PRIVATE_HOSTS".into(), "1".into())],
        &["fetch", &format!("{}/redirect-loop", server.base())],
    )
    .await;
    assert!(stderr(&out).contains("more than 10 redirects"), "{}", stderr(&out));
    let out = run(
        &v,
        &[("SCHOLIA_ALLOW_PRIVATE_HOSTS".into(), "1".into())],
        &["fetch", &format!("{}/binary", server.base())],
    )
    .await;
    assert!(
        stderr(&out).contains("`application/octet-stream` is not a web page"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn searxng_provider() {
    let server = fakes().await;
    let v = TestVault::example();
    let mut env = fake_env(&server, "fake");
    env.push(("SCHOLIA_SEARCH".into(), format!("searxng:{}", server.base())));
    let out = run(&v, &env, &["research", "Kombucha.md", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!server.requests("/search").is_empty());
    assert!(server.requests("/html/").is_empty());
}

/// The fixed sentences of a section are in the note's language or in English, never in
/// another language: every note of obsidian-help's 38 languages is guessed as its own language
/// where the templates have it (`pt-br` reads the `pt` sentences), else as English. Romanian
/// notes were guessed French ("la", "un", "de" are words of both), Catalan ones Spanish.
#[test]
fn every_note_s_sections_are_in_its_language_or_english() {
    use scholia::research::language::{SUPPORTED, guess};
    let root = crate::support::obsidian_help();
    let mut wrong: std::collections::BTreeMap<(String, &str), Vec<String>> = Default::default();
    let mut supported: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let mut seen = 0;
    for entry in std::fs::read_dir(&root).unwrap().flatten() {
        let lang = entry.file_name().to_string_lossy().to_string();
        if !entry.path().is_dir() || lang.starts_with('.') {
            continue;
        }
        let base = lang.split('-').next().unwrap_or("");
        let expected = [lang.as_str(), base]
            .into_iter()
            .find(|l| SUPPORTED.contains(l))
            .unwrap_or("en");
        for path in crate::support::files_under(&entry.path(), "md") {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            seen += 1;
            let got = guess(&text).unwrap_or("en");
            // A short note of another language's words (code, names) may read as English.
            if got != expected && got != "en" {
                let name = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
                wrong.entry((lang.clone(), got)).or_default().push(name);
            }
            if expected != "en" {
                let (own, all) = supported.entry(lang.clone()).or_default();
                *own += usize::from(got == expected);
                *all += 1;
            }
        }
    }
    assert!(seen > 6000, "only {seen} notes");
    assert!(
        wrong.is_empty(),
        "notes guessed in another language (vault, guessed): {wrong:?}"
    );
    // Most notes of the languages the templates have get their sentences (the rest are short
    // or mostly code and names).
    eprintln!("guessed as their own language: {supported:?}");
    for (lang, (own, all)) in &supported {
        assert!(*own * 100 >= *all * 85, "{lang}: {own} of {all} notes");
    }
}
