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
