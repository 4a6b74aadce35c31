//! The write paths under attack (issue 38): moves, creates and edits by agents (MCP) and
//! scripts (CLI) on vaults built to make them lose or misplace text. Each case: the files, the
//! action, what it must answer, and the vault byte for byte afterwards (a refused action
//! changes nothing, leaves no temp file, backup or journal).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::mcp::{Client, call, connect_with, text};
use crate::support::{TestVault, stderr, stdout};

/// Every file under the vault (hidden ones too) with its bytes.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            if meta.is_dir() {
                todo.push(e.path());
            } else if meta.file_type().is_symlink() {
                out.insert(
                    rel,
                    format!("-> {}", std::fs::read_link(e.path()).unwrap().display()).into_bytes(),
                );
            } else {
                out.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

async fn server(v: &TestVault, folders: &[&str], tools: Option<&[&str]>) -> (Client, tokio_util::sync::DropGuard) {
    let policy = scholia::mcp::Policy::new(false, tools.map(|t| t.iter().map(|s| s.to_string()).collect())).unwrap();
    let folders: Vec<String> = folders.iter().map(|s| s.to_string()).collect();
    let scope = scholia::index::Scope::new(&v.root, &folders).unwrap();
    connect_with(v, &Vec::new(), policy, scope).await
}

/// What a case must answer: a summary holding the text, or an error of that code whose
/// message holds the text.
enum Want {
    Ok(&'static str),
    Err(&'static str, &'static str),
}

struct Case {
    name: &'static str,
    files: Vec<(&'static str, Vec<u8>)>,
    tool: &'static str,
    args: Value,
    want: Want,
    /// Files that must hold these bytes afterwards (`None`: must not exist); a refused case
    /// must also leave every file as it was.
    after: Vec<(&'static str, Option<Vec<u8>>)>,
}

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

async fn run(case: Case, folders: &[&str]) {
    let v = TestVault::empty();
    for (p, bytes) in &case.files {
        let path = v.path(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let (c, _stop) = server(&v, folders, None).await;
    // The server answers once its start-up sync is over.
    let _ = call(&c, "list_notes", json!({})).await;
    let before = snapshot(&v.root);
    let r = call(&c, case.tool, case.args.clone()).await;
    let shown = text(&r);
    match case.want {
        Want::Ok(fragment) => {
            assert_ne!(r.is_error, Some(true), "{}: {shown}", case.name);
            assert!(shown.contains(fragment), "{}: {shown}", case.name);
        }
        Want::Err(code, fragment) => {
            assert_eq!(r.is_error, Some(true), "{}: not refused: {shown}", case.name);
            assert!(shown.starts_with(&format!("[{code}]")), "{}: {shown}", case.name);
            assert!(shown.contains(fragment), "{}: {shown}", case.name);
            assert!(
                !shown.contains(&v.root.display().to_string()),
                "{}: names the vault's place: {shown}",
                case.name
            );
            assert_eq!(
                snapshot(&v.root),
                before,
                "{}: a refused action changed the vault",
                case.name
            );
        }
    }
    for (p, want) in &case.after {
        let got = std::fs::read(v.path(p)).ok();
        assert_eq!(
            got.as_deref().map(String::from_utf8_lossy),
            want.as_deref().map(String::from_utf8_lossy),
            "{}: {p}",
            case.name
        );
    }
    let leftovers: Vec<String> = snapshot(&v.root)
        .into_keys()
        .filter(|k| k.rsplit('/').next().unwrap().starts_with(".scholia"))
        .collect();
    assert!(leftovers.is_empty(), "{}: left behind {leftovers:?}", case.name);
}

const K: &str = "# Kombucha\n\nTea with [[Wild yeasts]].\n";

/// Moves: every case of the issue's data-loss, escape and wrong-result points that a move
/// meets, through `move_note`.
#[tokio::test(flavor = "multi_thread")]
async fn moves_under_attack() {
    let latin1: Vec<u8> = b"Caf\xe9 and [[Kombucha]] in Latin-1\n".to_vec();
    let big_640k = format!(
        "# Big\n\n{}\n\nAt the end: [[Kombucha]].\n",
        "filler words here. ".repeat(35_000)
    );
    let cases = vec![
        // 1. A case-only twin the index does not know (gitignored) is never overwritten.
        Case {
            name: "case twin, gitignored",
            files: vec![
                ("Kombucha.md", b(K)),
                ("kombucha.md", b("secret")),
                (".gitignore", b("kombucha.md\n")),
            ],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "kombucha.md"}),
            want: Want::Err("CONFLICT", "`kombucha.md` already exists"),
            after: vec![("kombucha.md", Some(b("secret"))), ("Kombucha.md", Some(b(K)))],
        },
        Case {
            name: "case twin, binary",
            files: vec![
                ("Kombucha.md", b(K)),
                ("Other.md", b("x")),
                ("KOMBUCHA2.md", b("bin\0ary")),
            ],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "kombucha2.md"}),
            want: Want::Err("CONFLICT", "already exists as `KOMBUCHA2.md`"),
            after: vec![("KOMBUCHA2.md", Some(b("bin\0ary")))],
        },
        Case {
            name: "NFD twin of an NFC name, not UTF-8 inside",
            files: vec![("Kombucha.md", b(K)), ("Caf\u{e9}.md", latin1.clone())],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "Cafe\u{301}.md"}),
            want: Want::Err("CONFLICT", "already exists"),
            after: vec![("Caf\u{e9}.md", Some(latin1.clone()))],
        },
        // 4. A linker that cannot be rewritten: nothing moves, and the reply says so.
        Case {
            name: "read-only linker",
            files: vec![
                ("Kombucha.md", b(K)),
                ("A.md", b("see [[Kombucha]]\n")),
                ("B.md", b("and [[Kombucha]]\n")),
            ],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "Drinks/Kombucha tea.md"}),
            want: Want::Err("READ_ONLY_NOTE", "`B.md` is read-only; nothing was changed"),
            after: vec![
                ("A.md", Some(b("see [[Kombucha]]\n"))),
                ("Drinks/Kombucha tea.md", None),
            ],
        },
        // 5. Links past 512 KiB are rewritten too.
        Case {
            name: "a 640 KiB linker",
            files: vec![("Kombucha.md", b(K)), ("Big.md", b(&big_640k))],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "Booch.md"}),
            want: Want::Ok("1 links in 1 notes rewritten"),
            after: vec![("Big.md", Some(b(&big_640k.replace("[[Kombucha]]", "[[Booch]]"))))],
        },
        // 11, 23: names that break links and places the index ignores.
        Case {
            name: "a heading mark in the name",
            files: vec![("Kombucha.md", b(K))],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "Kom#bucha.md"}),
            want: Want::Err("INVALID_PATH", "`#`, which links cannot name"),
            after: vec![],
        },
        Case {
            name: "a pipe in the name",
            files: vec![("Kombucha.md", b(K))],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "Kom|bucha.md"}),
            want: Want::Err("INVALID_PATH", "`|`"),
            after: vec![],
        },
        Case {
            name: "closing brackets",
            files: vec![("Kombucha.md", b(K))],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "]]"}),
            want: Want::Err("INVALID_PATH", "`]`"),
            after: vec![],
        },
        Case {
            name: "a caret",
            files: vec![("Kombucha.md", b(K))],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "a^b"}),
            want: Want::Err("INVALID_PATH", "`^`"),
            after: vec![],
        },
        Case {
            name: "an opening bracket",
            files: vec![("Kombucha.md", b(K))],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "a[b"}),
            want: Want::Err("INVALID_PATH", "`[`"),
            after: vec![],
        },
        Case {
            name: "a line break",
            files: vec![("Kombucha.md", b(K))],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "a\nb.md"}),
            want: Want::Err("INVALID_PATH", "`\\n`"),
            after: vec![],
        },
        Case {
            name: "into node_modules",
            files: vec![("Kombucha.md", b(K))],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "node_modules/Kombucha.md"}),
            want: Want::Err("INVALID_INPUT", "scholia does not index"),
            after: vec![],
        },
        Case {
            name: "into a gitignored folder",
            files: vec![("Kombucha.md", b(K)), (".gitignore", b("build/\n"))],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "build/Kombucha.md"}),
            want: Want::Err("INVALID_INPUT", "scholia does not index"),
            after: vec![],
        },
        // 21. A linker that is not text scholia edits: the move is made and the reply names it.
        Case {
            name: "a Latin-1 linker is reported",
            files: vec![
                ("Kombucha.md", b(K)),
                ("Old.md", latin1.clone()),
                ("A.md", b("[[Kombucha]]\n")),
            ],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "Booch.md"}),
            want: Want::Ok("NOT rewritten, their links now lead nowhere: Old.md (not UTF-8)"),
            after: vec![("Old.md", Some(latin1.clone())), ("A.md", Some(b("[[Booch]]\n")))],
        },
        // 28. Markdown links, in the style they were written.
        Case {
            name: "markdown links keep their style",
            files: vec![
                (
                    "Kombucha.md",
                    b("# K\n\nSee [the bottle](../Kombucha.md) no: [x](Folder/Tea.md).\n"),
                ),
                (
                    "Folder/Tea.md",
                    b("[a](../Kombucha.md) [b](<../Kombucha.md#Brew>) ![c](/Kombucha.md)\n"),
                ),
                (
                    "Root.md",
                    b("[a](Kombucha.md), [b](./Kombucha.md), [c](Kombucha.md#^blk)\n"),
                ),
            ],
            tool: "move_note",
            args: json!({"path": "Kombucha.md", "to": "Drinks/Fizzy tea.md"}),
            want: Want::Ok("moved Kombucha.md to Drinks/Fizzy tea.md"),
            after: vec![
                (
                    "Folder/Tea.md",
                    Some(b(
                        "[a](../Drinks/Fizzy%20tea.md) [b](<../Drinks/Fizzy tea.md#Brew>) ![c](/Drinks/Fizzy%20tea.md)\n",
                    )),
                ),
                (
                    "Root.md",
                    Some(b(
                        "[a](Fizzy%20tea.md), [b](./Drinks/Fizzy%20tea.md), [c](Fizzy%20tea.md#^blk)\n",
                    )),
                ),
                // Its own relative link to a note that stays follows it to its new folder.
                (
                    "Drinks/Fizzy tea.md",
                    Some(b(
                        "# K\n\nSee [the bottle](../Kombucha.md) no: [x](../Folder/Tea.md).\n",
                    )),
                ),
            ],
        },
        // A folder moves with every note in it; links by path follow.
        Case {
            name: "a folder move",
            files: vec![
                (
                    "Journal/Day one.md",
                    b("[[Journal/Day two]] and [next](Day%20two.md)\n"),
                ),
                ("Journal/Day two.md", b("[[Index]] and [up](../Index.md)\n")),
                (
                    "Index.md",
                    b("[[Journal/Day one]], [[Day two]], [d](Journal/Day%20one.md)\n"),
                ),
            ],
            tool: "move_note",
            args: json!({"path": "Journal", "to": "Archive/2026"}),
            want: Want::Ok("moved the folder Journal (2 notes) to Archive/2026"),
            after: vec![
                (
                    "Index.md",
                    Some(b(
                        "[[Archive/2026/Day one]], [[Day two]], [d](Archive/2026/Day%20one.md)\n",
                    )),
                ),
                (
                    "Archive/2026/Day one.md",
                    Some(b("[[Archive/2026/Day two]] and [next](Day%20two.md)\n")),
                ),
                (
                    "Archive/2026/Day two.md",
                    Some(b("[[Index]] and [up](../../Index.md)\n")),
                ),
                ("Journal/Day one.md", None),
            ],
        },
    ];
    for case in cases {
        match case.name {
            "read-only linker" => run_read_only(case).await,
            _ => run(case, &[]).await,
        }
    }
}

/// [`run`] with `B.md` read-only.
async fn run_read_only(case: Case) {
    let v = TestVault::empty();
    for (p, bytes) in &case.files {
        v.write(p, &String::from_utf8_lossy(bytes));
    }
    let mut perms = std::fs::metadata(v.path("B.md")).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(v.path("B.md"), perms).unwrap();
    let (c, _stop) = server(&v, &[], None).await;
    let _ = call(&c, "list_notes", json!({})).await;
    let before = snapshot(&v.root);
    let r = call(&c, case.tool, case.args.clone()).await;
    let shown = text(&r);
    let Want::Err(code, fragment) = case.want else {
        unreachable!()
    };
    assert_eq!(r.is_error, Some(true), "{shown}");
    assert!(
        shown.starts_with(&format!("[{code}]")) && shown.contains(fragment),
        "{shown}"
    );
    assert_eq!(snapshot(&v.root), before);
}

/// Creates: the move rules for new notes, NUL bytes, templates from outside the vault.
#[tokio::test(flavor = "multi_thread")]
async fn creates_under_attack() {
    let cases = vec![
        Case {
            name: "a case twin",
            files: vec![("Kombucha.md", b(K))],
            tool: "create_note",
            args: json!({"path": "kombucha.md", "content": "x"}),
            want: Want::Err("CONFLICT", "already exists as `Kombucha.md`"),
            after: vec![("kombucha.md", None)],
        },
        Case {
            name: "an NFD twin",
            files: vec![("Caf\u{e9}.md", b("nfc"))],
            tool: "create_note",
            args: json!({"path": "Cafe\u{301}.md", "content": "x"}),
            want: Want::Err("CONFLICT", "already exists"),
            after: vec![],
        },
        Case {
            name: "a hash",
            files: vec![],
            tool: "create_note",
            args: json!({"path": "x#y.md"}),
            want: Want::Err("INVALID_PATH", "`#`"),
            after: vec![("x#y.md", None)],
        },
        Case {
            name: "a pipe",
            files: vec![],
            tool: "create_note",
            args: json!({"path": "x|y.md"}),
            want: Want::Err("INVALID_PATH", "`|`"),
            after: vec![],
        },
        Case {
            name: "a line break",
            files: vec![],
            tool: "create_note",
            args: json!({"path": "x\ny.md"}),
            want: Want::Err("INVALID_PATH", "`\\n`"),
            after: vec![],
        },
        Case {
            name: "node_modules",
            files: vec![],
            tool: "create_note",
            args: json!({"path": "node_modules/x.md"}),
            want: Want::Err("INVALID_INPUT", "scholia does not index"),
            after: vec![],
        },
        Case {
            name: "a NUL byte",
            files: vec![],
            tool: "create_note",
            args: json!({"path": "N.md", "content": "a\u{0}b"}),
            want: Want::Err("INVALID_INPUT", "content: holds a NUL byte"),
            after: vec![("N.md", None)],
        },
        Case {
            name: "a template folder out of the vault",
            files: vec![(".obsidian/templates.json", b(r#"{"folder": "../../outside"}"#))],
            tool: "create_note",
            args: json!({"path": "N.md", "template": "secret"}),
            want: Want::Err("INVALID_INPUT", "is not a folder of the vault"),
            after: vec![("N.md", None)],
        },
    ];
    for case in cases {
        run(case, &[]).await;
    }
}

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
