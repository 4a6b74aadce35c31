//! `scholia mcp install`: one engine call (`mcp_setup`), its answer shown.

use std::process::ExitCode;

use anyhow::Result;

use super::args::Install;
use super::render;
use scholia::config::ProcessEnv;
use scholia::engine::Summary;
use scholia::engine::mcp_setup::{self, Client, Places, Request, Scope, Transport};
use scholia::error::Error;

pub fn install(ask: Install) -> Result<ExitCode> {
    let places = Places::from_env(&ProcessEnv).map_err(Error::from)?;
    let vault = super::dir_or_cwd(ask.vault)?;
    let vault = scholia::vault::Vault::open(&vault)
        .map_err(Error::from)?
        .root()
        .to_path_buf();
    if ask.list {
        let listed = mcp_setup::list(&vault, &places);
        if ask.json {
            render::json(&listed)?;
        } else {
            for l in listed {
                println!(
                    "{:<15} {:<8} {:<8} {}",
                    l.client.name(),
                    format!("{:?}", l.scope).to_lowercase(),
                    l.state,
                    l.path.display()
                );
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let client: Client = ask.client.as_deref().unwrap_or_default().parse().map_err(Error::from)?;
    let scope = match ask.scope.as_deref() {
        Some(s) => s.parse::<Scope>().map_err(Error::from)?,
        None => client.default_scope(),
    };
    let transport = match ask.http {
        Some(url) => {
            let parsed = url::Url::parse(&url)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https"));
            if parsed.is_none() {
                return Err(Error::invalid(format!(
                    "--http: `{url}` is not valid; valid: the server's URL, e.g. http://127.0.0.1:8765/mcp"
                ))
                .into());
            }
            Transport::Http {
                url,
                token_env: ask.token_env,
            }
        }
        None => {
            // The binary as the host must start it: absolute, links resolved.
            let binary = std::env::current_exe().and_then(std::fs::canonicalize)?;
            Transport::Stdio {
                binary,
                vault: vault.clone(),
            }
        }
    };
    let req = Request {
        client,
        scope,
        transport,
        vault,
        force: ask.force,
    };
    let plan = mcp_setup::plan(&req, &places).map_err(Error::from)?;
    if ask.dry_run {
        if ask.json {
            render::json(&plan)?;
        } else {
            eprintln!(
                "{} ({}): {} would be {} (nothing written):",
                client.title(),
                format!("{scope:?}").to_lowercase(),
                plan.path.display(),
                format!("{:?}", plan.action).to_lowercase()
            );
            print!("{}", plan.text);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let done = mcp_setup::apply(plan).map_err(Error::from)?;
    if ask.json {
        render::json(&done)?;
    } else {
        println!("{}", done.summary());
    }
    Ok(ExitCode::SUCCESS)
}
