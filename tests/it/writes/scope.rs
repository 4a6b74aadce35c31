//! Templates, symlinked folders and the tool list: what a confined server may read and write.

use super::*;

/// A symlinked template pointing out of the vault (even at /etc/hostname) is no template.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn templates_never_copy_a_file_from_outside() {
    let v = TestVault::with_files(&[("Templates/Daily.md", "# {{title}}\n")]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "PASSWORD").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), v.path("Templates/pw.md")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", v.path("Templates/host.md")).unwrap();
    let (c, _stop) = server(&v, &[], None).await;
    for t in ["pw", "host"] {
        let r = call(&c, "create_note", json!({"path": format!("{t}.md"), "template": t})).await;
        assert_eq!(r.is_error, Some(true), "{}", text(&r));
        assert!(text(&r).contains("valid: Daily"), "{}", text(&r));
        assert!(!v.path(&format!("{t}.md")).exists());
    }
    let ok = call(&c, "create_note", json!({"path": "Mon.md", "template": "Daily"})).await;
    assert_ne!(ok.is_error, Some(true), "{}", text(&ok));
    assert_eq!(v.read("Mon.md"), "# Mon\n");
}

/// A server confined to `Journal`: a template out of its scope is not copied in, and its
/// error names no note out of the scope.
#[tokio::test(flavor = "multi_thread")]
async fn templates_stay_inside_the_scope() {
    let v = TestVault::with_files(&[
        ("Journal/Day.md", "# Day\n"),
        ("Templates/Wild yeast.md", "private recipe\n"),
    ]);
    let (c, _stop) = server(&v, &["Journal"], None).await;
    let r = call(
        &c,
        "create_note",
        json!({"path": "Journal/C.md", "template": "Wild yeast"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(
        text(&r).contains("outside the folders this server may use"),
        "{}",
        text(&r)
    );
    assert!(!text(&r).contains("Wild yeast` is"), "{}", text(&r));
    assert!(!v.path("Journal/C.md").exists());
}

/// 8, 10: a symlinked folder does not carry another folder into the scope, for reading or
/// writing; a move that would break links outside the scope is refused.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn symlinked_folders_do_not_cross_the_scope() {
    let v = TestVault::with_files(&[
        ("Journal/Day.md", "# Day\n\nbaked bread with [[Yeast]]\n"),
        ("Microbes/Yeast.md", "# Yeast\n\nsaccharomyces zymology\n"),
        ("Microbes/Bacteria.md", "# Bacteria\n\nSee [[Yeast]].\n"),
    ]);
    std::os::unix::fs::symlink(v.path("Microbes"), v.path("Journal/ToMicrobes")).unwrap();
    let (c, stop) = server(&v, &["Journal"], None).await;
    let found = call(&c, "find_notes", json!({"query": "zymology"})).await;
    assert!(!text(&found).contains("Yeast"), "{}", text(&found));
    let list = call(&c, "list_notes", json!({})).await;
    assert!(!text(&list).contains("ToMicrobes"), "{}", text(&list));
    let resources = c.list_resources(None).await.unwrap();
    assert!(
        resources.resources.iter().all(|r| !r.uri.contains("ToMicrobes")),
        "{resources:?}"
    );
    assert!(
        resources.resources.iter().any(|r| r.uri.contains("Day.md")),
        "{resources:?}"
    );
    let before = snapshot(&v.root);
    for (tool, args) in [
        ("research_note", json!({"path": "Journal/ToMicrobes/Yeast.md"})),
        ("read_note", json!({"path": "Journal/ToMicrobes/Yeast.md"})),
        (
            "create_note",
            json!({"path": "Journal/ToMicrobes/New.md", "content": "x"}),
        ),
        (
            "move_note",
            json!({"path": "Journal/Day.md", "to": "Journal/ToMicrobes/Day.md"}),
        ),
    ] {
        let r = call(&c, tool, args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{tool} {args}: {}", text(&r));
        assert!(text(&r).contains("OUT_OF_SCOPE"), "{tool}: {}", text(&r));
    }
    assert_eq!(snapshot(&v.root), before);
    drop((c, stop));

    // A server of `Microbes` may not move a note that `Journal` links to.
    let (c, _stop) = server(&v, &["Microbes"], None).await;
    let _ = call(&c, "list_notes", json!({})).await;
    let before = snapshot(&v.root);
    let r = call(
        &c,
        "move_note",
        json!({"path": "Microbes/Yeast.md", "to": "Microbes/Yeasts.md"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(text(&r).contains("1 note outside the folders"), "{}", text(&r));
    assert!(
        !text(&r).contains("Journal"),
        "names no note out of the scope: {}",
        text(&r)
    );
    assert_eq!(snapshot(&v.root), before);
}

/// 9. `--tools` decides resources and instructions too.
#[tokio::test(flavor = "multi_thread")]
async fn the_tool_list_decides_resources_and_instructions() {
    let v = TestVault::with_files(&[("Secret.md", "# Secret\n")]);
    let (c, _stop) = server(&v, &[], Some(&["fetch_page"])).await;
    let info = c.peer_info().unwrap();
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(instructions.contains("fetch_page"), "{instructions}");
    for hidden in ["find_notes", "read_note", "note:///"] {
        assert!(!instructions.contains(hidden), "{hidden}: {instructions}");
    }
    assert!(info.capabilities.resources.is_none());
    let listed = c.list_resources(None).await.unwrap();
    assert!(listed.resources.is_empty(), "{listed:?}");
    let read = c
        .read_resource(rmcp::model::ReadResourceRequestParams::new("note:///Secret.md"))
        .await;
    assert!(read.is_err(), "{read:?}");
}
