//! The layering, checked: each crate depends only on the crates below it (the graph drawn in
//! docs/ARCHITECTURE.md), only the LSP surface knows LSP types and only the MCP surface rmcp,
//! and the surfaces neither set up what the engine sets up nor restate its defaults.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The scholia crates a manifest depends on (normal dependencies).
fn scholia_deps(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let deps = doc
        .get("dependencies")
        .and_then(|d| d.as_table())
        .cloned()
        .unwrap_or_default();
    deps.keys()
        .filter_map(|k| k.strip_prefix("scholia-").map(str::to_string))
        .collect()
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    crate::support::files_under(dir, "rs")
}

/// Code lines of a file (comments left out: a comment may name what the code must not use).
fn code(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    // The graph, bottom up. A new edge is a design change: draw it in ARCHITECTURE.md first.
    let graph: &[(&str, &[&str])] = &[
        ("base", &[]),
        ("vault", &["base"]),
        ("embed", &["base"]),
        ("prompts", &["base", "vault"]),
        ("index", &["base", "embed", "vault"]),
        ("providers", &["base", "embed", "prompts", "vault"]),
        ("research", &["base", "embed", "index", "prompts", "providers", "vault"]),
        ("tasks", &["base", "prompts", "providers", "vault"]),
        (
            "engine",
            &[
                "base",
                "embed",
                "index",
                "prompts",
                "providers",
                "research",
                "tasks",
                "vault",
            ],
        ),
    ];
    let on_disk: BTreeSet<String> = std::fs::read_dir(repo().join("crates"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let drawn: BTreeSet<String> = graph.iter().map(|(c, _)| c.to_string()).collect();
    assert_eq!(on_disk, drawn, "every crate has its place in the graph");
    for (i, (krate, allowed)) in graph.iter().enumerate() {
        let deps = scholia_deps(&repo().join("crates").join(krate).join("Cargo.toml"));
        let allowed: BTreeSet<String> = allowed.iter().map(|s| s.to_string()).collect();
        assert!(
            deps.is_subset(&allowed),
            "{krate} depends on {deps:?}; the graph allows {allowed:?}"
        );
        let below: BTreeSet<String> = graph[..i].iter().map(|(c, _)| c.to_string()).collect();
        assert!(allowed.is_subset(&below), "{krate}: the graph itself points down");
        let manifest = std::fs::read_to_string(repo().join("crates").join(krate).join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains("\ndescription = "),
            "{krate}: a one-line purpose in Cargo.toml"
        );
        let lib = std::fs::read_to_string(repo().join("crates").join(krate).join("src/lib.rs")).unwrap();
        assert!(lib.starts_with("//!"), "{krate}: a //! header");
    }
}

#[test]
fn only_the_lsp_surface_knows_lsp_and_only_the_mcp_surface_rmcp() {
    let check = |dir: &str, banned: &[&str]| {
        for file in sources(&repo().join(dir)) {
            let text = code(&file);
            for b in banned {
                assert!(!text.contains(b), "{} names {b}", file.display());
            }
        }
    };
    check("crates", &["tower_lsp_server", "lsp_types", "rmcp", "scholia::"]);
    check("src/cli", &["tower_lsp_server", "rmcp"]);
    check("src/lsp", &["rmcp"]);
    check("src/mcp", &["tower_lsp_server"]);
}

#[test]
fn the_surfaces_set_up_nothing_and_restate_no_default() {
    for file in sources(&repo().join("src")) {
        let text = code(&file);
        for banned in [
            // Task storage and the runner are the engine's (Engine::tasks, Host::run_tasks).
            "Tasks::open",
            "Store::open",
            ".run(runner",
            // Defaults the task API owns.
            "\"running_async\"",
            "\"pending\"",
            "8.0",
            "deep-research-pro",
            // The research LLM, Sonar and the Gemini agent come configured from the engine.
            "ChatClient::new",
            "Sonar::new",
            "Interactions::new",
        ] {
            assert!(!text.contains(banned), "{} names {banned}", file.display());
        }
    }
}
