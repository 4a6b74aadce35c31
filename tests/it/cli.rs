//! The CLI as a user runs it: the real binary on temp vaults.

use crate::support::{TestVault, stderr, stdout};

#[test]
fn index_then_search_the_example_vault() {
    let v = TestVault::example();
    let out = v.run(&["index", "--vault", v.root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("7 notes indexed, 0 unchanged, 0 removed, 0 skipped, 0 failed, 0 truncated in "),
        "{}",
        stdout(&out)
    );
    // Nothing changed: nothing re-read.
    let out = v.run(&["index"]);
    assert!(
        stdout(&out).starts_with("0 notes indexed, 7 unchanged"),
        "{}",
        stdout(&out)
    );

    let out = v.run(&["search", "wild yeast", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let hits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits[0]["path"], "Microbes/Wild yeast.md");
    assert_eq!(hits[0]["title"], "Wild yeast");
    assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
    let snippet = hits[0]["snippet"].as_str().unwrap();
    let first = &hits[0]["highlights"][0];
    let (s, e) = (
        first["start"].as_u64().unwrap() as usize,
        first["end"].as_u64().unwrap() as usize,
    );
    assert!(
        ["wild", "yeast"].contains(&snippet[s..e].to_lowercase().as_str()),
        "{snippet} {s}..{e}"
    );

    // Text output: path, score, title, then the snippet.
    let out = v.run(&["search", "hooch", "--limit", "1"]);
    let text = stdout(&out);
    let first_line = text.lines().next().unwrap();
    assert!(first_line.contains(".md") && text.lines().count() == 2, "{text}");
}

#[test]
fn search_sees_changes_without_an_explicit_index() {
    let v = TestVault::example();
    assert!(v.run(&["index"]).status.success());
    v.write("New idea.md", "# New idea\n\nPerhaps koji is the next experiment.\n");
    std::fs::remove_file(v.path("Kombucha.md")).unwrap();
    let hits: serde_json::Value = serde_json::from_slice(&v.run(&["search", "koji", "--json"]).stdout).unwrap();
    assert_eq!(hits[0]["path"], "New idea.md");
    let hits: serde_json::Value = serde_json::from_slice(&v.run(&["search", "scoby", "--json"]).stdout).unwrap();
    assert_eq!(hits, serde_json::json!([]));
}

#[test]
fn phrase_lenient_and_fuzzy_queries() {
    let v = TestVault::example();
    let paths = |q: &str| -> Vec<String> {
        let out = v.run(&["search", q, "--json"]);
        assert!(out.status.success(), "{q}: {}", stderr(&out));
        let hits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        hits.as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        paths("\"acetic acid bacteria\""),
        vec!["Kombucha.md", "Microbes/Lactic acid bacteria.md"]
    );
    assert_eq!(paths("\"bacteria acetic\""), Vec::<String>::new());
    // Unbalanced quotes, stray operators and unknown fields do not fail.
    assert!(!paths("\"starter AND (").is_empty());
    assert!(paths("nosuchfield:yeast").len() <= 10);
    // A typo in a title still finds the note.
    assert_eq!(paths("Kombuhca").first().map(String::as_str), Some("Kombucha.md"));
    assert_eq!(paths("title:kombucha"), vec!["Kombucha.md"]);
}

#[test]
fn bad_input_gets_clear_errors() {
    let v = TestVault::example();
    let out = v.run(&["search", "x", "--vault", "/no/such/vault"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        "scholia: error: vault `/no/such/vault`: no such directory"
    );

    let out = v.run(&["index", "--vault", v.path("Kombucha.md").to_str().unwrap()]);
    assert!(stderr(&out).contains("not a directory"), "{}", stderr(&out));

    let out = v.run(&["search", "x", "--limit", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--limit"), "{}", stderr(&out));

    let out = v.run(&["search", "  "]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("query: empty"), "{}", stderr(&out));

    let out = v.run(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn hostile_files_are_skipped_with_reasons() {
    let v = TestVault::example();
    std::fs::write(v.path("image.md"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    std::fs::write(v.path("latin1.md"), b"# Caf\xe9\n").unwrap();
    // 50 MB note: indexed up to the cap, counted as truncated.
    let big = "word ".repeat(10 * 1024 * 1024);
    std::fs::write(v.path("huge.md"), format!("# Huge\n\n{big}")).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(v.path("Microbes"), v.path("Microbes/loop")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", v.path("escape.md")).unwrap();
    }
    let out = v.run(&["index", "--reasons"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("8 notes indexed, 0 unchanged, 0 removed, 4 skipped, 0 failed, 1 truncated"),
        "{text}"
    );
    assert!(
        text.contains("skipped  escape.md  (symlink outside the vault)"),
        "{text}"
    );
    assert!(text.contains("skipped  image.md  (binary)"), "{text}");
    assert!(text.contains("skipped  latin1.md  (not UTF-8)"), "{text}");
    assert!(text.contains("(symlink loop)"), "{text}");
    assert!(text.contains("truncated  huge.md"), "{text}");
    let hits: serde_json::Value = serde_json::from_slice(&v.run(&["search", "huge", "--json"]).stdout).unwrap();
    assert_eq!(hits[0]["path"], "huge.md");
}

#[test]
fn corrupt_or_foreign_index_is_rebuilt() {
    let v = TestVault::example();
    assert!(v.run(&["index"]).status.success());
    let index_dir = std::fs::read_dir(v.home.join("cache/index"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // Corrupt: every file truncated to garbage.
    for entry in std::fs::read_dir(&index_dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e != "json") {
            std::fs::write(&p, b"garbage").unwrap();
        }
    }
    std::fs::write(index_dir.join("meta.json"), b"{not json").unwrap();
    let out = v.run(&["search", "kombucha", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let hits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits[0]["path"], "Kombucha.md");

    // Foreign: someone else's files in our directory, no marker.
    std::fs::remove_file(index_dir.join("scholia-index.json")).unwrap();
    std::fs::write(index_dir.join("notes.db"), b"whatever").unwrap();
    let out = v.run(&["index"]);
    assert!(
        stdout(&out).starts_with("7 notes indexed"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// `cargo install --path .` installs only `scholia`: the loopback fakes live in their own
/// crate of the workspace, a dev-dependency.
#[test]
fn the_product_contains_no_fakes() {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
            "--manifest-path",
        ])
        .arg(crate::support::repo().join("Cargo.toml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let scholia = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "scholia")
        .unwrap();
    let bins: Vec<&str> = scholia["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(bins, ["scholia"]);
    for dep in scholia["dependencies"].as_array().unwrap() {
        if dep["name"] == "scholia-fakes" {
            assert_eq!(dep["kind"], "dev", "the fakes are test code: {dep}");
        }
    }
}

/// What a new user types, and what they must get back: the exit status the README documents
/// and a message that says what is wrong (data-driven: arguments → status, message).
#[tokio::test(flavor = "multi_thread")]
async fn exit_statuses_and_messages() {
    let server = crate::support::fakes().await;
    let v = TestVault::example();
    v.write("Notes/.keep.md", "# keep\n");
    let none = Vec::new();
    let refused = crate::support::env(&[
        ("SCHOLIA_LLM_BASE_URL", "http://127.0.0.1:9/v1"),
        ("SCHOLIA_LLM_MODEL", "m"),
        ("SCHOLIA_DUCKDUCKGO_URL", &server.base()),
        ("SCHOLIA_ALLOW_PRIVATE_HOSTS", "1"),
        ("GEMINI_CLI", "/nonexistent/gemini"),
    ]);
    let no_gemini = crate::support::env(&[("GEMINI_CLI", "/nonexistent/gemini")]);
    let cases: &[(&[&str], &crate::support::EnvVars, i32, &str)] = &[
        // Not configured: 3.
        (
            &["deep-search", "q", "--backend", "llm"],
            &none,
            3,
            "backend: llm needs a research LLM",
        ),
        (&["ask", "q"], &none, 3, "OPENROUTER_API_KEY"),
        (
            &["tasks", "start", "q", "--kind", "deep-search"],
            &no_gemini,
            3,
            "deep search needs the Gemini CLI or a research LLM",
        ),
        // A note that is not there, or not a note: 4 and 1, saying which.
        (
            &["research", "Missing.md"],
            &none,
            4,
            "path `Missing.md`: no such note in the vault",
        ),
        (&["research", "Kombucha"], &none, 1, "did you mean `Kombucha.md`?"),
        (&["research", "Journal"], &none, 1, "path `Journal`: is a directory"),
        // Flag values outside their valid set: 2, like every usage error.
        (
            &["ask", "q", "--model", "gpt"],
            &none,
            2,
            "Valid options: sonar, sonar-pro",
        ),
        (&["ask", "q", "--timeout", "5"], &none, 2, "from 5000 to 600000"),
        (&["search", "q", "--limit", "0"], &none, 2, "0 is not in 1..=1000"),
        (&["tasks", "list", "--limit", "0"], &none, 2, "0 is not in 1..=1000"),
        (
            &["deep-search", "q", "--max-iterations", "99"],
            &none,
            2,
            "99 is not in 1..=50",
        ),
        // Nothing there yet: said, not silent.
        (&["tasks", "list"], &none, 0, "no tasks yet"),
        (&["trust", "--list"], &none, 0, "no vault is trusted"),
        (&["trust"], &none, 1, "this one has none, so there is nothing to trust"),
        (
            &["mcp", "--vault", "/nonexistent/vault"],
            &none,
            1,
            "vault `/nonexistent/vault`: no such directory",
        ),
        // An LLM nobody answers at: one round, not five, and the error names it.
        (
            &["deep-search", "q", "--backend", "llm"],
            &refused,
            1,
            "LLM at http://127.0.0.1:9/v1 is unreachable",
        ),
    ];
    for (args, env, status, message) in cases {
        let started = std::time::Instant::now();
        let out = v.cli(env, args).await;
        let shown = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(*status), "{args:?}: {shown}");
        assert!(shown.contains(message), "{args:?}: wanted …{message}…, got {shown}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{args:?}: {:?}",
            started.elapsed()
        );
    }
    // Deep search against a refused LLM stopped after its first round.
    let out = v.cli(&refused, &["deep-search", "q", "--backend", "llm"]).await;
    assert!(!stderr(&out).contains("round 2/"), "{}", stderr(&out));
}

/// The preview a research run prints says when it is cut; a task's status is said once.
#[tokio::test(flavor = "multi_thread")]
async fn previews_and_statuses_read_well() {
    let v = TestVault::example();
    let out = v.cli(&Vec::new(), &["research", "Sourdough starter.md"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // The run says it was offline and how to read the web; the note's section does not.
    let summary = text.lines().next().unwrap_or_default();
    assert!(
        summary.starts_with("Wrote `## Research` in Sourdough starter.md")
            && summary.ends_with(scholia::engine::OFFLINE_HINT),
        "{summary}"
    );
    let note = v.read("Sourdough starter.md");
    assert!(!note.contains("README") && !note.contains("LLM"), "{note}");
    let preview = text.split("\n\n").nth(1).unwrap_or_default();
    if preview.chars().count() >= 500 {
        assert!(preview.trim_end().ends_with('…'), "{preview}");
    }
    // Aliases in frontmatter are names of the note a search finds.
    v.write(
        "Koji.md",
        "---\naliases: [Aspergillus oryzae]\n---\n# Koji\n\nA mould.\n",
    );
    let out = v.run(&["search", "oryzae", "--json"]);
    let hits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits[0]["path"], "Koji.md", "{hits}");
}

/// Ctrl-C during `scholia index` stops it with "cancelled" and status 130.
#[cfg(unix)]
#[test]
fn ctrl_c_cancels_indexing() {
    let v = TestVault::empty();
    for i in 0..4000 {
        v.write(
            &format!("n/{i}.md"),
            &format!("# Note {i}\n\n{}\n", "words about bread and yeast ".repeat(200)),
        );
    }
    let child = v
        .cmd()
        .args(["index"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        return; // indexing won the race on a fast machine; nothing to cancel
    }
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("cancelled"), "{}", stderr(&out));
}

/// The README's commands table lists every command and every flag there is, and nothing else.
#[test]
fn the_readme_commands_table_matches_help() {
    let readme = std::fs::read_to_string(crate::support::repo().join("README.md")).unwrap();
    let table = readme
        .split("## Commands")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .nth(1)
        .unwrap();
    let flags = |text: &str| -> std::collections::BTreeSet<String> {
        text.split(|c: char| c.is_whitespace() || matches!(c, '[' | ']' | '`' | ',' | '|'))
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .map(|w| w.split('=').next().unwrap().to_string())
            .filter(|w| w != "--help" && w != "--version")
            .collect()
    };
    let mut documented = std::collections::BTreeMap::new();
    for row in table.lines().filter(|l| l.starts_with("| `scholia ")) {
        let usage = row.split('`').nth(1).unwrap();
        let words: Vec<&str> = usage.split_whitespace().skip(1).collect();
        let path: Vec<&str> = words
            .iter()
            .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.starts_with('-'))
            .copied()
            .collect();
        documented.insert(path.join(" "), flags(usage));
    }
    let help = |path: &[&str]| -> String {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_scholia"))
            .args(path)
            .arg("--help")
            .output()
            .unwrap();
        stdout(&out)
    };
    let commands = |path: &[&str]| -> Vec<String> {
        help(path)
            .split("Commands:")
            .nth(1)
            .unwrap_or("")
            .split("Options:")
            .next()
            .unwrap()
            .lines()
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .filter(|c| c != "help")
            .collect()
    };
    let mut real = std::collections::BTreeMap::new();
    for c in commands(&[]) {
        if c == "tasks" {
            for t in commands(&["tasks"]) {
                let options = help(&["tasks", &t]);
                real.insert(format!("tasks {t}"), flags(options.split("Options:").nth(1).unwrap()));
            }
        } else {
            let options = help(&[&c]);
            real.insert(c.clone(), flags(options.split("Options:").nth(1).unwrap()));
            // A server command with actions of its own (`mcp install`).
            for t in commands(&[c.as_str()]) {
                let options = help(&[&c, &t]);
                real.insert(format!("{c} {t}"), flags(options.split("Options:").nth(1).unwrap()));
            }
        }
    }
    assert_eq!(documented, real, "the README's commands table and `--help` differ");
}

/// Offline research takes a focus: its words lead the terms and the notes found, or it says
/// the vault has none of them.
#[test]
fn offline_research_is_steered_by_a_focus() {
    let v = TestVault::example();
    let out = v.run(&["research", "Sourdough starter.md", "--focus", "rye", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["topics"][0], "rye", "{r}");
    assert!(r["section"].as_str().unwrap().contains("focused on rye"), "{r}");
    // What the note does not know: a note it does not link leads; the bread log it links is
    // not offered as news.
    let section = r["section"].as_str().unwrap();
    assert!(section.contains("- [[Reading list]] —"), "{r}");
    assert!(!section.contains("- [[Bread log]]"), "{r}");
    let out = v.run(&["research", "Sourdough starter.md", "--focus", "zeppelins"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("focus: no word of `zeppelins` is in another note"),
        "{}",
        stderr(&out)
    );
}

/// `scholia mcp install` (issue 40) against a temporary HOME: the dry run prints the host's
/// file naming the binary by its absolute path and writes nothing; the install merges, keeps
/// the other servers, backs the file up, and refuses to replace a different entry.
#[test]
fn mcp_install_writes_each_host_s_file() {
    let v = TestVault::example();
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_scholia")).unwrap();
    let out = v.run(&["mcp", "install", "--client", "cursor", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let shown: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(shown["mcpServers"]["scholia"]["command"], bin.to_str().unwrap());
    assert!(std::path::Path::new(shown["mcpServers"]["scholia"]["command"].as_str().unwrap()).is_absolute());
    assert!(!v.root.join(".cursor").exists(), "a dry run writes nothing");

    let desktop = v.home.join(".config/Claude/claude_desktop_config.json");
    std::fs::create_dir_all(desktop.parent().unwrap()).unwrap();
    std::fs::write(
        &desktop,
        r#"{"mcpServers": {"files": {"command": "npx"}}, "theme": "dark"}"#,
    )
    .unwrap();
    let out = v.run(&["mcp", "install", "--client", "claude-desktop"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("added scholia") && stdout(&out).contains("restart Claude Desktop"),
        "{}",
        stdout(&out)
    );
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&desktop).unwrap()).unwrap();
    assert_eq!(written["mcpServers"]["files"]["command"], "npx");
    assert_eq!(written["theme"], "dark");
    assert_eq!(
        written["mcpServers"]["scholia"]["args"][2],
        v.root.canonicalize().unwrap().to_str().unwrap()
    );
    let backups = std::fs::read_dir(desktop.parent().unwrap())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("scholia-backup")
        })
        .count();
    assert_eq!(backups, 1);

    // Another vault's scholia is there: refused (exit 1, the file unchanged) unless --force.
    let before = std::fs::read_to_string(&desktop).unwrap();
    let other = TestVault::empty();
    let out = v.run(&[
        "mcp",
        "install",
        "--client",
        "claude-desktop",
        "--vault",
        other.root.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&desktop).unwrap(), before);

    let out = v.run(&["mcp", "install", "--list"]);
    let listed = stdout(&out);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("claude-desktop") && l.contains("present")),
        "{listed}"
    );
    let out = v.run(&["mcp", "install", "--client", "emacs"]);
    assert!(stderr(&out).contains("valid: claude-desktop, claude-code, cursor, vscode, codex, zed"));
}

/// `scholia check` (issue 41): broken links as `path:line:col` lines and exit 1; a clean vault
/// exits 0; GitHub annotations; only the paths asked for.
#[test]
fn check_lists_every_problem_and_fails_on_errors() {
    let v = TestVault::with_files(&[
        ("A.md", "# A\n\nSee [[B]] and [[Nope]].\n\nAnd [[B#Missing]].\n"),
        ("B.md", "# B\n\nBack to [[A]].\n"),
        ("Sub/C.md", "# C\n\n![[gone.png]]\n"),
    ]);
    let out = v.run(&["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "A.md:3:15: error: no note named `Nope` in the vault [unresolved-link]\n\
         A.md:5:5: error: `B.md` has no heading `Missing` [unresolved-heading]\n\
         Sub/C.md:3:1: error: no file `gone.png` in the vault [missing-embed]\n"
    );
    assert!(
        stderr(&out).contains("3 notes checked: 3 errors, 0 warnings"),
        "{}",
        stderr(&out)
    );
    let out = v.run(&["check", "--format", "github", "Sub"]);
    assert_eq!(
        stdout(&out),
        "::error file=Sub/C.md,line=3,col=1,title=missing-embed::no file `gone.png` in the vault\n"
    );
    let out = v.run(&["check", "--format", "json", "B.md"]);
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!((json["notes"].as_u64(), json["errors"].as_u64()), (Some(1), Some(0)));
    v.write("A.md", "# A\n\nSee [[B]].\n");
    v.write("Sub/C.md", "# C\n");
    let out = v.run(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).is_empty());
    let out = v.run(&["check", "--format", "xml"]);
    assert!(stderr(&out).contains("text, json, github"), "{}", stderr(&out));
    let out = v.run(&["check", "/etc"]);
    assert!(stderr(&out).contains("not in the vault"), "{}", stderr(&out));
}
