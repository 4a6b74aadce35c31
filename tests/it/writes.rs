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

mod edits;
mod scope;
