//! Runs scholia's loopback fakes as a process, for editor and agent end-to-end tests:
//!
//!     scholia-fakes --pages ../shared/webpages/readability-test-pages [--port 0]
//!                   [--llm-latency-ms N] [--search-latency-ms N] [--page-latency-ms N]
//!
//! Prints `{"base": "http://127.0.0.1:PORT"}` on stdout once listening, then serves until killed.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use scholia_fakes::{FakeServer, Latency};

#[derive(Parser)]
struct Args {
    /// Directory of readability test pages (one folder per page with source.html)
    #[arg(long)]
    pages: PathBuf,
    #[arg(long, default_value_t = 0)]
    port: u16,
    #[arg(long, default_value_t = 0)]
    llm_latency_ms: u64,
    #[arg(long, default_value_t = 0)]
    search_latency_ms: u64,
    #[arg(long, default_value_t = 0)]
    page_latency_ms: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let latency = Latency {
        llm: Duration::from_millis(args.llm_latency_ms),
        search: Duration::from_millis(args.search_latency_ms),
        page: Duration::from_millis(args.page_latency_ms),
    };
    let server = FakeServer::start(args.pages, latency, args.port).await?;
    println!("{}", serde_json::json!({"base": server.base()}));
    tokio::signal::ctrl_c().await?;
    Ok(())
}
