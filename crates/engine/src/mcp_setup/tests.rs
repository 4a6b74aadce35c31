use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

fn places(os: Os, home: &Path) -> Places {
    Places {
        os,
        home: home.to_path_buf(),
        xdg_config: None,
        appdata: None,
        codex_home: None,
    }
}

fn stdio() -> Transport {
    Transport::Stdio {
        binary: PathBuf::from("/opt/scholia/bin/scholia"),
        vault: PathBuf::from("/home/u/Notes"),
    }
}

fn request(client: Client, scope: Scope, vault: &Path, transport: Transport, force: bool) -> Request {
    Request {
        client,
        scope,
        transport,
        vault: vault.to_path_buf(),
        force,
    }
}

#[test]
fn each_host_s_file_per_scope_and_system() {
    let check = |client: Client, scope: Scope, os: Os, expected: &str| {
        let p = places(os, Path::new("/h"));
        let got = paths::config_file(client, scope, Path::new("/v"), &p).map(|p| p.display().to_string());
        assert_eq!(
            got.map_err(|e| e.to_string()),
            Ok(expected.to_string()),
            "{client:?} {scope:?} {os:?}"
        );
    };
    use Client::*;
    use Os::*;
    use Scope::*;
    check(
        ClaudeDesktop,
        User,
        Linux,
        "/h/.config/Claude/claude_desktop_config.json",
    );
    check(
        ClaudeDesktop,
        User,
        MacOs,
        "/h/Library/Application Support/Claude/claude_desktop_config.json",
    );
    check(
        ClaudeDesktop,
        User,
        Windows,
        "/h/AppData/Roaming/Claude/claude_desktop_config.json",
    );
    check(ClaudeCode, Project, Linux, "/v/.mcp.json");
    check(ClaudeCode, User, MacOs, "/h/.claude.json");
    check(Cursor, Project, Windows, "/v/.cursor/mcp.json");
    check(Cursor, User, Linux, "/h/.cursor/mcp.json");
    check(Vscode, Project, Linux, "/v/.vscode/mcp.json");
    check(Vscode, User, Linux, "/h/.config/Code/User/mcp.json");
    check(Vscode, User, MacOs, "/h/Library/Application Support/Code/User/mcp.json");
    check(Vscode, User, Windows, "/h/AppData/Roaming/Code/User/mcp.json");
    check(Codex, User, Linux, "/h/.codex/config.toml");
    check(Codex, Project, MacOs, "/v/.codex/config.toml");
    check(Zed, User, Linux, "/h/.config/zed/settings.json");
    check(Zed, User, MacOs, "/h/.config/zed/settings.json");
    check(Zed, User, Windows, "/h/AppData/Roaming/Zed/settings.json");
    check(Zed, Project, Linux, "/v/.zed/settings.json");
    // The environment moves them.
    let mut p = places(Linux, Path::new("/h"));
    p.xdg_config = Some("/x".into());
    p.codex_home = Some("/c".into());
    assert_eq!(
        paths::config_file(Vscode, User, Path::new("/v"), &p).unwrap(),
        Path::new("/x/Code/User/mcp.json")
    );
    assert_eq!(
        paths::config_file(Codex, User, Path::new("/v"), &p).unwrap(),
        Path::new("/c/config.toml")
    );
    let err = paths::config_file(ClaudeDesktop, Project, Path::new("/v"), &p).unwrap_err();
    assert!(err.to_string().contains("valid: user"), "{err}");
}

#[test]
fn every_host_s_entry_names_the_binary_by_its_absolute_path() {
    for client in Client::ALL {
        let home = tempfile::tempdir().unwrap();
        let req = request(client, Scope::User, home.path(), stdio(), false);
        let plan = plan(&req, &places(Os::Linux, home.path())).unwrap();
        assert_eq!(plan.action, Action::Added, "{client:?}");
        assert!(
            plan.text.contains("/opt/scholia/bin/scholia"),
            "{client:?}: {}",
            plan.text
        );
        assert!(plan.text.contains("/home/u/Notes"), "{client:?}: {}", plan.text);
        assert!(!plan.path.exists(), "a plan writes nothing");
    }
}

#[test]
fn a_merge_keeps_every_other_server_and_setting_in_order() {
    let home = tempfile::tempdir().unwrap();
    let p = places(Os::Linux, home.path());
    let file = home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let before = r#"{"zeta": 1, "mcpServers": {"other": {"command": "x"}}, "alpha": [1, 2]}"#;
    std::fs::write(&file, before).unwrap();
    let req = request(Client::Cursor, Scope::User, home.path(), stdio(), false);
    let done = apply(plan(&req, &p).unwrap()).unwrap();
    assert_eq!(done.plan.action, Action::Added);
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let keys: Vec<&String> = after.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["zeta", "mcpServers", "alpha"]);
    assert_eq!(after["mcpServers"]["other"], json!({"command": "x"}));
    assert_eq!(
        after["mcpServers"]["scholia"]["args"],
        json!(["mcp", "--vault", "/home/u/Notes"])
    );
    assert_eq!(std::fs::read_to_string(done.backup.unwrap()).unwrap(), before);
    // Again: nothing to do, nothing written, no backup.
    let again = apply(plan(&req, &p).unwrap()).unwrap();
    assert_eq!(again.plan.action, Action::Unchanged);
    assert!(again.backup.is_none());
    // Another binary: refused without --force, the file untouched.
    let moved = Transport::Stdio {
        binary: "/usr/local/bin/scholia".into(),
        vault: "/home/u/Notes".into(),
    };
    let text = std::fs::read_to_string(&file).unwrap();
    let err = plan(
        &request(Client::Cursor, Scope::User, home.path(), moved.clone(), false),
        &p,
    )
    .unwrap_err();
    assert!(matches!(err, SetupError::Differs { .. }), "{err}");
    assert!(err.to_string().contains("--force") && err.to_string().contains("/opt/scholia/bin/scholia"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let forced = apply(plan(&request(Client::Cursor, Scope::User, home.path(), moved, true), &p).unwrap()).unwrap();
    assert_eq!(forced.plan.action, Action::Replaced);
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("/usr/local/bin/scholia")
    );
}

#[test]
fn a_file_with_comments_is_left_alone_with_the_entry_to_add() {
    let home = tempfile::tempdir().unwrap();
    let p = places(Os::Linux, home.path());
    let file = home.path().join(".config/zed/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let before = "// Zed settings\n{\n  \"theme\": \"One Dark\", // mine\n}\n";
    std::fs::write(&file, before).unwrap();
    let err = plan(&request(Client::Zed, Scope::User, home.path(), stdio(), false), &p).unwrap_err();
    let shown = err.to_string();
    assert!(
        shown.contains("comments") && shown.contains("context_servers"),
        "{shown}"
    );
    assert!(
        shown.contains("/opt/scholia/bin/scholia"),
        "the entry to paste: {shown}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
}

#[test]
fn codex_keeps_its_comments_and_tables() {
    let home = tempfile::tempdir().unwrap();
    let p = places(Os::Linux, home.path());
    let file = home.path().join(".codex/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let before = "# my codex\nmodel = \"o3\" # the best\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
    std::fs::write(&file, before).unwrap();
    let req = request(Client::Codex, Scope::User, home.path(), stdio(), false);
    let done = apply(plan(&req, &p).unwrap()).unwrap();
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.starts_with(before), "{after}");
    assert!(after.contains("[mcp_servers.scholia]\ncommand = \"/opt/scholia/bin/scholia\"\nargs = [\"mcp\", \"--vault\", \"/home/u/Notes\"]"), "{after}");
    assert!(done.backup.is_some());
    assert_eq!(plan(&req, &p).unwrap().action, Action::Unchanged);
    let http = Transport::Http {
        url: "http://127.0.0.1:8765/mcp".into(),
        token_env: Some("SCHOLIA_MCP_TOKEN".into()),
    };
    let forced = plan(&request(Client::Codex, Scope::User, home.path(), http, true), &p).unwrap();
    assert!(
        forced.text.contains("bearer_token_env_var = \"SCHOLIA_MCP_TOKEN\""),
        "{}",
        forced.text
    );
    assert!(forced.text.contains("# my codex"));
}

#[test]
fn over_http_the_token_stays_in_the_environment() {
    let http = |var: Option<&str>| Transport::Http {
        url: "http://127.0.0.1:8765/mcp".into(),
        token_env: var.map(str::to_string),
    };
    let check = |client: Client, expected: Result<Value, &str>| {
        let got = json::entry(client, &http(Some("TOK")));
        match expected {
            Ok(v) => assert_eq!(got.unwrap(), v, "{client:?}"),
            Err(part) => {
                let e = got.unwrap_err().to_string();
                assert!(e.contains(part), "{client:?}: {e}");
            }
        }
    };
    let url = "http://127.0.0.1:8765/mcp";
    check(
        Client::ClaudeCode,
        Ok(json!({"type": "http", "url": url, "headers": {"Authorization": "Bearer ${TOK}"}})),
    );
    check(
        Client::Cursor,
        Ok(json!({"url": url, "headers": {"Authorization": "Bearer ${env:TOK}"}})),
    );
    check(
        Client::Vscode,
        Ok(json!({"type": "http", "url": url, "headers": {"Authorization": "Bearer ${env:TOK}"}})),
    );
    check(Client::Zed, Err("does not write a token into a file"));
    check(Client::ClaudeDesktop, Err("Connectors"));
    assert_eq!(json::entry(Client::Zed, &http(None)).unwrap(), json!({"url": url}));
}

#[test]
fn a_symlinked_file_is_written_where_it_points() {
    let home = tempfile::tempdir().unwrap();
    let p = places(Os::Linux, home.path());
    let dotfiles = home.path().join("dotfiles/claude.json");
    std::fs::create_dir_all(dotfiles.parent().unwrap()).unwrap();
    std::fs::write(&dotfiles, "{\"numStartups\": 3}").unwrap();
    std::os::unix::fs::symlink(&dotfiles, home.path().join(".claude.json")).unwrap();
    let req = request(Client::ClaudeCode, Scope::User, home.path(), stdio(), false);
    apply(plan(&req, &p).unwrap()).unwrap();
    assert!(
        std::fs::symlink_metadata(home.path().join(".claude.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&dotfiles).unwrap()).unwrap();
    assert_eq!(after["numStartups"], 3);
    assert_eq!(after["mcpServers"]["scholia"]["type"], "stdio");
}

#[test]
fn the_list_says_where_scholia_is() {
    let home = tempfile::tempdir().unwrap();
    let vault = tempfile::tempdir().unwrap();
    let p = places(Os::Linux, home.path());
    apply(
        plan(
            &request(Client::Vscode, Scope::Project, vault.path(), stdio(), false),
            &p,
        )
        .unwrap(),
    )
    .unwrap();
    std::fs::create_dir_all(home.path().join(".cursor")).unwrap();
    std::fs::write(home.path().join(".cursor/mcp.json"), "{\"mcpServers\": {}}").unwrap();
    let listed = list(vault.path(), &p);
    let state = |c: Client, s: Scope| {
        listed
            .iter()
            .find(|l| l.client == c && l.scope == s)
            .map(|l| l.state.clone())
    };
    assert_eq!(state(Client::Vscode, Scope::Project).as_deref(), Some("present"));
    assert_eq!(state(Client::Cursor, Scope::User).as_deref(), Some("absent"));
    assert_eq!(state(Client::Codex, Scope::User).as_deref(), Some("missing"));
    assert_eq!(state(Client::ClaudeDesktop, Scope::Project), None);
    assert!(
        ".".parse::<Client>()
            .unwrap_err()
            .to_string()
            .contains("claude-desktop, claude-code, cursor, vscode, codex, zed")
    );
}
