//! How results look on a terminal: summaries from the engine, results on stdout, progress and
//! notes on stderr.

use std::io::{IsTerminal, Write};
use std::ops::Range;
use std::sync::Arc;

use scholia::engine::{JobStart, ProgressSink, ResearchOutcome, SearchResults, Summary, Update};
use scholia::index::{self, Progress, SyncSummary};
use scholia::research::deep_search::DeepSearchResult;
use scholia::research::sonar::SonarAnswer;
use scholia::web::fetch::Page;

/// Job progress as `· message` lines on a terminal's stderr (nothing when redirected).
pub fn progress_lines(_: &JobStart) -> Arc<dyn ProgressSink> {
    struct Lines(bool);
    impl ProgressSink for Lines {
        fn update(&self, u: &Update) {
            if self.0 {
                eprintln!("· {}", u.message);
            }
        }
        fn end(&self, _: &str) {}
    }
    Arc::new(Lines(std::io::stderr().is_terminal()))
}

/// A `[####    ] done/total notes` bar on a terminal's stderr while indexing.
pub fn index_bar(show: bool) -> impl FnMut(Progress) {
    let tty = show && std::io::stderr().is_terminal();
    move |p| {
        let Progress::Indexed { done, total, .. } = p else {
            return;
        };
        if !tty {
            return;
        }
        let width = 30;
        let filled = (done * width).checked_div(total).unwrap_or(width);
        eprint!(
            "\r[{}{}] {done}/{total} notes",
            "#".repeat(filled),
            " ".repeat(width - filled)
        );
        if done == total {
            eprint!("\r{}\r", " ".repeat(width + 30));
        }
    }
}

/// A progress bar of the vault's vectors on a terminal.
pub fn embed_bar() -> impl FnMut(scholia::index::EmbedProgress) {
    let tty = std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    move |p| {
        if !tty || p.total == 0 {
            return;
        }
        let width = 30;
        let filled = (p.done * width).checked_div(p.total).unwrap_or(width);
        let rate = p.done as f64 / started.elapsed().as_secs_f64().max(0.001);
        eprint!(
            "\r[{}{}] {}/{} notes' vectors ({rate:.0}/s)",
            "#".repeat(filled),
            " ".repeat(width - filled),
            p.done,
            p.total
        );
        if p.done == p.total {
            eprint!("\r{}\r", " ".repeat(width + 50));
        }
    }
}

/// A line on a terminal while a command waits on something that may take long (an
/// embeddings endpoint's cold model), cleared when the wait ends.
pub struct Waiting {
    what: String,
    tty: bool,
    /// When the bytes received were last shown.
    shown: Option<std::time::Instant>,
}

impl Waiting {
    pub fn on(what: String) -> Waiting {
        let tty = std::io::stderr().is_terminal();
        if tty {
            eprint!("\rwaiting for {what} (Ctrl-C skips the vectors; the word index is saved)");
        }
        Waiting { what, tty, shown: None }
    }

    /// A model's download has received `bytes` so far (shown ten times a second at most).
    pub fn received(&mut self, bytes: u64) {
        if !self.tty
            || self
                .shown
                .is_some_and(|t| t.elapsed() < std::time::Duration::from_millis(100))
        {
            return;
        }
        self.shown = Some(std::time::Instant::now());
        eprint!(
            "\r\x1b[2Kwaiting for {}: {:.1} MB received (Ctrl-C skips the vectors; the word index is saved)",
            self.what,
            bytes as f64 / 1e6
        );
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.tty {
            eprint!("\r\x1b[2K");
        }
    }
}

pub fn json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    use std::io::Write;
    let text = serde_json::to_string_pretty(value)?;
    match writeln!(std::io::stdout().lock(), "{text}") {
        // The reader went away (`| head`): not an error of ours.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

pub fn sync_summary(s: &SyncSummary, reasons: bool) {
    println!(
        "{} notes indexed, {} unchanged, {} removed, {} skipped, {} failed, {} truncated in {:.2}s",
        s.indexed,
        s.unchanged,
        s.removed,
        s.skipped.len(),
        s.failed.len(),
        s.truncated.len(),
        s.elapsed.as_secs_f64()
    );
    if reasons {
        for k in &s.skipped {
            println!("skipped  {}  ({})", k.path, k.reason);
        }
        for k in &s.failed {
            println!("failed   {}  ({})", k.path, k.reason);
        }
        for t in &s.truncated {
            println!("truncated  {t}  (indexed the first {} bytes)", index::MAX_INDEX_BYTES);
        }
    } else if !s.skipped.is_empty() || !s.failed.is_empty() || !s.truncated.is_empty() {
        println!("(run with --reasons to see why)");
    }
}

pub fn hits(results: &SearchResults) -> anyhow::Result<()> {
    if results.hits.is_empty() {
        eprintln!("{}", results.summary());
        return Ok(());
    }
    let bold = std::io::stdout().is_terminal();
    let mut out = std::io::stdout().lock();
    for h in &results.hits {
        writeln!(out, "{}  {:.2}  {}", h.path, h.score, h.title)?;
        writeln!(out, "    {}", highlight(&h.snippet, &h.highlights, bold))?;
    }
    Ok(())
}

pub fn research(r: &ResearchOutcome) {
    println!("{}", r.summary());
    for w in &r.research.warnings {
        println!("warning: {w}");
    }
    println!("\n{}", r.research.preview);
}

pub fn deep_search(r: &DeepSearchResult) {
    println!("{}", r.result.trim_end());
    let m = &r.metadata;
    println!(
        "\n---\n{} (of at most {}; {}, {}; {} searches, {:.1} s)",
        r.summary(),
        m.max_iterations,
        m.backend,
        m.model,
        m.search_queries_used.len(),
        m.duration_ms as f64 / 1000.0
    );
    if let Some(note) = &r.note {
        println!("note: {note}");
    }
}

pub fn answer(a: &SonarAnswer) {
    println!("{}", a.answer.trim_end());
    if !a.sources.is_empty() {
        println!("\nSources:");
        for (i, s) in a.sources.iter().enumerate() {
            match &s.title {
                Some(t) => println!("{}. {t} <{}>", i + 1, s.url),
                None => println!("{}. <{}>", i + 1, s.url),
            }
        }
    }
    let m = &a.metadata;
    eprintln!(
        "({}; {}, timeout {} ms{}{}, {} tokens{})",
        a.summary(),
        m.model_id,
        m.timeout,
        if m.cost_tier.is_some() { ", premium" } else { "" },
        if m.cached { ", cached" } else { "" },
        m.usage.prompt_tokens + m.usage.completion_tokens,
        m.cost.map(|c| format!(", ${c:.4}")).unwrap_or_default()
    );
}

pub fn page(p: &Page) {
    if let Some(title) = &p.content.title {
        println!("# {title}\n");
    }
    println!("{}", p.content.markdown);
    eprintln!("({})", p.summary());
}

fn highlight(snippet: &str, ranges: &[Range<usize>], ansi: bool) -> String {
    let (open, close) = if ansi { ("\x1b[1m", "\x1b[0m") } else { ("", "") };
    let mut out = String::with_capacity(snippet.len() + ranges.len() * 8);
    let mut at = 0;
    for r in ranges {
        if r.start < at || r.end > snippet.len() {
            continue;
        }
        out.push_str(&snippet[at..r.start]);
        out.push_str(open);
        out.push_str(&snippet[r.clone()]);
        out.push_str(close);
        at = r.end;
    }
    out.push_str(&snippet[at..]);
    out
}

/// `scholia check`'s report: one line per problem (`text`: `path:line:col: severity: message
/// [code]`; `github`: workflow commands the Actions log turns into annotations), then the
/// summary on stderr; or the whole report as JSON.
pub fn checked(c: &scholia::index::Checked, format: &str) -> anyhow::Result<()> {
    use scholia::engine::Summary;
    use scholia::index::Severity;
    if format == "json" {
        return json(c);
    }
    let name = |s: Severity| match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    for p in &c.problems {
        match format {
            "github" => {
                // Workflow command values escape `%`, CR and LF; properties also `:` and `,`.
                let data = |s: &str| s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A");
                let prop = |s: &str| data(s).replace(':', "%3A").replace(',', "%2C");
                println!(
                    "::{} file={},line={},col={},title={}::{}",
                    name(p.severity),
                    prop(&p.path),
                    p.line,
                    p.col,
                    p.code,
                    data(&p.message)
                );
            }
            _ => println!(
                "{}:{}:{}: {}: {} [{}]",
                p.path,
                p.line,
                p.col,
                name(p.severity),
                p.message,
                p.code
            ),
        }
    }
    for (path, why) in &c.unread {
        eprintln!("{path}: not checked: {why}");
    }
    eprintln!("{}", c.summary());
    Ok(())
}
