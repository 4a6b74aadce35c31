//! The `scholia` binary: parses arguments, sets up logging, hands over to `cli`.

mod cli;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    limit_allocator_retention();
    let args = cli::args::Cli::parse();
    let default_level = args.command.default_log_level();
    // tantivy's segment manager warns when a merge ends after a commit dropped one of its
    // segments (a saved note's old one-document segment, now empty): the merge is abandoned,
    // nothing is lost, and the warning was noise in every editor's log.
    let default_filter = format!("scholia={default_level},warn,tantivy::indexer::segment_manager=error");
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SCHOLIA_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter)),
        )
        .init();
    // Web pages are read in child processes of this binary, which a deadline kills.
    if let Ok(exe) = std::env::current_exe() {
        scholia::web::extract::worker::run_in_child_of(exe);
    }
    cli::run(args.command)
}

/// glibc raises its mmap threshold each time a large block is freed, after which the index
/// writer's per-segment arenas come from the heap and are kept after use: ~20 MB of resident
/// memory for nothing on a 6,000-note vault. A fixed threshold returns them to the system.
fn limit_allocator_retention() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only tunes the allocator; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}
