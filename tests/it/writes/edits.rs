//! Edits under attack: by agents and scripts, through symlinked and huge linking notes, and
//! two edits racing on one expected hash.

use super::*;

/// 2, 12, 17, 18, 19, 20: edits.
#[tokio::test(flavor = "multi_thread")]
async fn edits_under_attack() {
    let cr = "---\rtitle: Kombucha\rtags: [tea, ferment]\raliases: [Booch]\r---\r# Kombucha\r## Notes\rold\r";
    let v = TestVault::with_files(&[
        ("Cr.md", cr),
        ("Setext.md", "Title\n=====\n\nintro\n\nPart\n----\nold\n"),
        ("Open.md", "# T\n## Log\n```\nnever closed\n"),
    ]);
    v.write("Bin.md", "x");
    std::fs::write(v.path("Bin.md"), b"bin\0ary").unwrap();
    let (c, _stop) = server(&v, &[], None).await;
    let hash = |r: &rmcp::model::CallToolResult| {
        r.structured_content.clone().unwrap()["hash"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let h = hash(&call(&c, "read_note", json!({"path": "Cr.md", "outline": true})).await);
    let r = call(
        &c,
        "edit_note",
        json!({"path": "Cr.md", "frontmatter": {"status": "done"}, "expected_hash": h}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(
        v.read("Cr.md"),
        "---\rtitle: Kombucha\rtags: [tea, ferment]\raliases: [Booch]\rstatus: \"done\"\r---\r# Kombucha\r## Notes\rold\r"
    );
    let h = hash(&r);
    let r = call(
        &c,
        "edit_note",
        json!({"path": "Cr.md", "heading": "Notes", "mode": "replace", "content": "new", "expected_hash": h}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert!(v.read("Cr.md").ends_with("## Notes\r\rnew\r"), "{:?}", v.read("Cr.md"));

    let h = hash(&call(&c, "read_note", json!({"path": "Setext.md", "outline": true})).await);
    let r = call(
        &c,
        "edit_note",
        json!({"path": "Setext.md", "heading": "Part", "mode": "replace", "content": "new", "expected_hash": h}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(v.read("Setext.md"), "Title\n=====\n\nintro\n\nPart\n----\n\nnew\n");

    let before = snapshot(&v.root);
    for (args, code, fragment) in [
        (
            json!({"path": "Open.md", "heading": "Log", "content": "more"}),
            "OPEN_BLOCK_AT_END",
            "ends inside a code block",
        ),
        (
            json!({"path": "Open.md", "heading": "Log", "content": "a\u{0}b"}),
            "INVALID_INPUT",
            "NUL byte",
        ),
        (
            json!({"path": "Open.md", "frontmatter": {" evil": 1}, "expected_hash": "x"}),
            "INVALID_INPUT",
            "is not a field name",
        ),
        (
            json!({"path": "Bin.md", "heading": "x", "content": "y"}),
            "NOT_A_NOTE",
            "Bin.md",
        ),
    ] {
        let r = call(&c, "edit_note", args.clone()).await;
        let shown = text(&r);
        assert_eq!(r.is_error, Some(true), "{args}: {shown}");
        assert!(
            shown.starts_with(&format!("[{code}]")) && shown.contains(fragment),
            "{args}: {shown}"
        );
        assert!(!shown.contains(&v.root.display().to_string()), "{args}: {shown}");
    }
    assert_eq!(snapshot(&v.root), before);
}

/// 1, 2 through the CLI: `scholia move` and `scholia edit --set`.
#[test]
fn the_cli_keeps_the_same_rules() {
    let v = TestVault::with_files(&[
        ("Kombucha.md", K),
        ("kombucha.md", "secret"),
        (".gitignore", "kombucha.md\n"),
        ("Cr.md", "---\rtitle: K\rtags: [a]\raliases: [B]\r---\r# K\r"),
    ]);
    let out = v.run(&["move", "Kombucha.md", "kombucha.md"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("`kombucha.md` already exists"),
        "{}",
        stderr(&out)
    );
    assert_eq!(v.read("kombucha.md"), "secret");
    assert_eq!(v.read("Kombucha.md"), K);
    let hash = {
        let out = v.run(&["outline", "Cr.md", "--json"]);
        let o: Value = serde_json::from_str(&stdout(&out)).unwrap();
        o["hash"].as_str().unwrap().to_string()
    };
    let out = v.run(&["edit", "Cr.md", "--set", "status=done", "--expected-hash", &hash]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        v.read("Cr.md"),
        "---\rtitle: K\rtags: [a]\raliases: [B]\rstatus: \"done\"\r---\r# K\r"
    );
    // A folder moves from the CLI too.
    v.write("Journal/Day.md", "# Day\n");
    v.write("Index.md", "[[Journal/Day]]\n");
    let out = v.run(&["move", "Journal", "Archive/Journal"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(v.read("Index.md"), "[[Archive/Journal/Day]]\n");
}

/// 22. A linking note that is a symlink is written through, never replaced by a copy.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn symlinked_linkers_are_written_through() {
    let v = TestVault::with_files(&[("Kombucha.md", K), ("Real/Linker.md", "[[Kombucha]]\n")]);
    std::os::unix::fs::symlink(v.path("Real/Linker.md"), v.path("Alias.md")).unwrap();
    let (c, _stop) = server(&v, &[], None).await;
    let r = call(&c, "move_note", json!({"path": "Kombucha.md", "to": "Booch.md"})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert!(
        std::fs::symlink_metadata(v.path("Alias.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(v.read("Real/Linker.md"), "[[Booch]]\n");
}

/// 5. Backlinks see a link past 512 KiB and in a 20 MB note; the 20 MB linker is rewritten.
#[tokio::test(flavor = "multi_thread")]
async fn big_linkers_are_read_whole() {
    let big = format!(
        "# Big\n\n{}\n\nAt the end: [[Kombucha]].\n",
        "filler words here. ".repeat(35_000)
    );
    let huge = format!(
        "# Huge\n\n{}\n\nAt the end: [[Kombucha]].\n",
        "x".repeat(20 * 1024 * 1024)
    );
    let v = TestVault::with_files(&[("Kombucha.md", K), ("Big.md", &big), ("Huge.md", &huge)]);
    let (c, _stop) = server(&v, &[], None).await;
    let back = call(&c, "backlinks", json!({"path": "Kombucha.md"})).await;
    let shown = text(&back);
    assert!(shown.contains("Big.md") && shown.contains("Huge.md"), "{shown}");
    let r = call(&c, "move_note", json!({"path": "Kombucha.md", "to": "Booch.md"})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert!(v.read("Huge.md").ends_with("At the end: [[Booch]].\n"));
    assert!(v.read("Big.md").ends_with("At the end: [[Booch]].\n"));
}

/// 3. Two edits sent together with one expected hash: exactly one is made, on one server and
/// across processes; concurrent appends all land.
#[tokio::test(flavor = "multi_thread")]
async fn one_hash_one_edit() {
    let v = TestVault::with_files(&[("N.md", "# N\n\n## S\n\nstart\n")]);
    let (c, _stop) = server(&v, &[], None).await;
    let c = std::sync::Arc::new(c);
    for trial in 0..40 {
        let h = call(&c, "read_note", json!({"path": "N.md", "outline": true}))
            .await
            .structured_content
            .unwrap()["hash"]
            .as_str()
            .unwrap()
            .to_string();
        let edit = |who: &str| {
            let (c, h, who) = (c.clone(), h.clone(), who.to_string());
            tokio::spawn(async move {
                let r = call(
                    &c,
                    "edit_note",
                    json!({"path": "N.md", "heading": "S", "mode": "replace", "content": who, "expected_hash": h}),
                )
                .await;
                r.is_error != Some(true)
            })
        };
        // Contents of their own: an edit that changes nothing is no edit (and no conflict).
        let (a, b) = (edit(&format!("first {trial}")), edit(&format!("second {trial}")));
        let wins = [a.await.unwrap(), b.await.unwrap()].iter().filter(|w| **w).count();
        assert_eq!(wins, 1, "trial {trial}: {wins} edits made against one hash");
    }
    let appends: Vec<_> = (0..40)
        .map(|i| {
            let c = c.clone();
            tokio::spawn(async move {
                let r = call(
                    &c,
                    "edit_note",
                    json!({"path": "N.md", "heading": "S", "content": format!("line {i}")}),
                )
                .await;
                (i, r.is_error != Some(true))
            })
        })
        .collect();
    let mut acknowledged = Vec::new();
    for a in appends {
        let (i, ok) = a.await.unwrap();
        if ok {
            acknowledged.push(i);
        }
    }
    let text_now = v.read("N.md");
    for i in &acknowledged {
        assert!(
            text_now.contains(&format!("line {i}\n")),
            "acknowledged append {i} lost:\n{text_now}"
        );
    }
    assert_eq!(acknowledged.len(), 40);
}

/// The same across two processes: two `scholia edit` runs with one hash.
#[test]
fn one_hash_one_edit_across_processes() {
    let v = TestVault::with_files(&[("N.md", "# N\n\n## S\n\nstart\n")]);
    let mut wins_total = 0;
    for trial in 0..12 {
        let out = v.run(&["outline", "N.md", "--json"]);
        let h = serde_json::from_str::<Value>(&stdout(&out)).unwrap()["hash"]
            .as_str()
            .unwrap()
            .to_string();
        let spawn = |who: &str| {
            v.cmd()
                .args([
                    "edit",
                    "N.md",
                    "--heading",
                    "S",
                    "--mode",
                    "replace",
                    "--content",
                    who,
                    "--expected-hash",
                    &h,
                ])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(&format!("first {trial}")), spawn(&format!("second {trial}")));
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let wins = [a.status.success(), b.status.success()].iter().filter(|w| **w).count();
        assert_eq!(wins, 1, "trial {trial}: {} / {}", stderr(&a), stderr(&b));
        let loser = if a.status.success() { &b } else { &a };
        assert!(
            stderr(loser).contains("CONFLICT") || stderr(loser).contains("changed since"),
            "{}",
            stderr(loser)
        );
        wins_total += wins;
    }
    assert_eq!(wins_total, 12);
}
