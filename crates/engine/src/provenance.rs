//! Provenance of research runs: each run's record (what it read, what it found contradicted)
//! saved in the data directory under `provenance/<run>.json`, the stamp that names it in the
//! note's `## Research`, and what an editor shows from them — the section's lens, a citation's
//! source, the contradictions on the lines they concern.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use scholia_research::record::{RunRecord, SourceRecord};
use scholia_vault::confine::ConfinedDir;
use scholia_vault::stamp::ResearchStamp;

use crate::Engine;

/// A contradiction the research found, placed on the note's current text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedContradiction {
    /// The line of the note making the claim (trimmed bytes).
    pub claim: Range<usize>,
    /// The `**Contradiction:**` line in `## Research`.
    pub research_line: Range<usize>,
    pub summary: String,
    /// The source's title (else its URL or note).
    pub source_label: String,
    /// The URL or link target of the source.
    pub source: Option<String>,
    /// The researched note (where the research line is).
    pub source_note: String,
}

/// A cited source under the cursor, from the run that cited it.
#[derive(Debug, Clone, PartialEq)]
pub struct Citation {
    pub source: SourceRecord,
    pub stamp: ResearchStamp,
    /// When the run was made (its record's minute, else the stamp's day).
    pub when: String,
}

impl Engine {
    fn provenance_dir(&self) -> PathBuf {
        self.settings.dirs.data.join("provenance")
    }

    /// Saves a run's record (off the runtime) and returns the stamp that names it; `note` is
    /// the researched note's file, whose run time is kept apart (see [`Engine::run_time`]).
    pub(crate) async fn record_run(
        &self,
        record: RunRecord,
        depth: &str,
        model: Option<String>,
        sources: usize,
        note: &std::path::Path,
    ) -> ResearchStamp {
        let (data, depth) = (self.settings.dirs.data.clone(), depth.to_string());
        let who = note_key(note);
        scholia_base::spawn_blocking(move || {
            let stamp = save_run(data.clone(), &record, &depth, model.as_deref(), sources);
            save_time(&data, &stamp.run, &who);
            stamp
        })
        .await
    }

    /// When run `run` was last made on the note at `note` (blocking): its own minute, even
    /// when the same research (the same record, the same run) was made on another copy of the
    /// vault or another note; else the record's, else `None`.
    pub fn run_time(&self, run: &str, note: &std::path::Path) -> Option<String> {
        if run.is_empty() || !run.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let own = self.provenance_dir().join(format!("{run}.{}.at", note_key(note)));
        std::fs::read_to_string(own)
            .ok()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .or_else(|| self.run_record(run).map(|r| r.at.clone()).filter(|t| !t.is_empty()))
    }

    /// The record of run `run` (blocking); `None` when it is not kept (another machine's
    /// research, a cleaned data directory). Read once per run: diagnostics ask at every commit.
    pub fn run_record(&self, run: &str) -> Option<Arc<RunRecord>> {
        if run.is_empty() || !run.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        if let Some(known) = scholia_base::lock(&self.records).get(run) {
            return known.clone();
        }
        let read = std::fs::read_to_string(self.provenance_dir().join(format!("{run}.json")))
            .ok()
            .and_then(|t| serde_json::from_str::<RunRecord>(&t).ok())
            .map(Arc::new);
        let mut records = scholia_base::lock(&self.records);
        if records.len() >= 512 {
            records.clear();
        }
        // A record not there yet may be written later (another process's run): not remembered.
        if read.is_some() {
            records.insert(run.to_string(), read.clone());
        }
        read
    }

    /// The contradictions `text`'s research recorded whose claim line is still in the note,
    /// as it was (blocking). A re-run or an edited line clears them.
    pub fn contradictions(&self, rel: &str, text: &str) -> Vec<PlacedContradiction> {
        let Some((stamp, start)) = ResearchStamp::of(text) else {
            return Vec::new();
        };
        let Some(record) = self.run_record(&stamp.run) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for c in &record.contradictions {
            let Some(claim) = line_range(&text[..start], &c.claim, 0) else {
                continue;
            };
            let research_line = text[start..]
                .find(&c.summary)
                .map(|i| {
                    let at = start + i;
                    let from = text[..at].rfind('\n').map_or(0, |n| n + 1);
                    let to = text[at..].find('\n').map_or(text.len(), |n| at + n);
                    from..to
                })
                .unwrap_or(start..start);
            let label = c
                .source
                .as_deref()
                .and_then(|s| {
                    record.sources.iter().find(|r| {
                        r.url.as_deref() == Some(s) || r.target.as_deref().is_some_and(|t| t.eq_ignore_ascii_case(s))
                    })
                })
                .map(|r| r.title.clone())
                .or_else(|| c.source.clone())
                .unwrap_or_else(|| "a source".into());
            out.push(PlacedContradiction {
                claim,
                research_line,
                summary: c.summary.clone(),
                source_label: label,
                source: c.source.clone(),
                source_note: rel.to_string(),
            });
        }
        out
    }

    /// The source a link at byte `offset` of `text`'s `## Research` cites, from the run that
    /// wrote the section (blocking).
    pub fn citation_at(&self, text: &str, offset: usize) -> Option<Citation> {
        let (stamp, start) = ResearchStamp::of(text)?;
        if offset < start {
            return None;
        }
        let range = scholia_vault::section::find(text, scholia_vault::SECTION, scholia_vault::SECTION_LEVEL).ok()??;
        if offset >= range.end {
            return None;
        }
        let link = link_at(text, offset)?;
        let record = self.run_record(&stamp.run)?;
        let when = if record.at.is_empty() {
            stamp.at.clone()
        } else {
            record.at.clone()
        };
        let source = record
            .sources
            .iter()
            .find(|s| match &link {
                Cited::Url(u) => s.url.as_deref() == Some(u.as_str()),
                Cited::Note(t) => s.target.as_deref().is_some_and(|x| x.eq_ignore_ascii_case(t)),
            })?
            .clone();
        Some(Citation { source, stamp, when })
    }
}

/// Saves a run's record in `data` and returns the stamp that names it. The run's id is a hash
/// of what it found, so the same research gives the same section. A record that cannot be
/// saved (a full disk, a read-only data directory) costs the hovers, never the research.
fn save_run(data: PathBuf, record: &RunRecord, depth: &str, model: Option<&str>, sources: usize) -> ResearchStamp {
    let json = serde_json::to_string(record).expect("records serialise");
    let run = scholia_vault::stamp::hash(&format!("{depth}\n{}\n{json}", model.unwrap_or("none")));
    let now = time::OffsetDateTime::now_utc();
    let day = format!("{:04}-{:02}-{:02}", now.year(), now.month() as u8, now.day());
    let mut record = record.clone();
    record.at = format!("{day}T{:02}:{:02}Z", now.hour(), now.minute());
    let saved = ConfinedDir::new("data directory", "provenance", &data, &[&data]).and_then(|dir| {
        dir.create(
            &format!("{run}.json"),
            &serde_json::to_string_pretty(&record).expect("records serialise"),
        )
    });
    match saved {
        // The same research again: its record is there already.
        Ok(_) | Err(scholia_vault::confine::ConfineError::Exists { .. }) => {}
        Err(e) => tracing::warn!("the run's provenance was not saved: {e}"),
    }
    ResearchStamp {
        run,
        at: day,
        depth: depth.to_string(),
        model: model.unwrap_or("none").to_string(),
        sources,
        above: String::new(),
        words: String::new(),
    }
}

/// A note's file as a name part: the hash of its canonical path.
fn note_key(note: &std::path::Path) -> String {
    let real = std::fs::canonicalize(note).unwrap_or_else(|_| note.to_path_buf());
    scholia_vault::stamp::hash(&real.to_string_lossy())
}

/// This minute as the time run `run` was made on note `who` (replacing an earlier one).
fn save_time(data: &std::path::Path, run: &str, who: &str) {
    let now = time::OffsetDateTime::now_utc();
    let at = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}Z",
        now.year(),
        now.month() as u8,
        now.day(),
        now.hour(),
        now.minute()
    );
    let dir = data.join("provenance");
    let path = dir.join(format!("{run}.{who}.at"));
    let tmp = dir.join(format!(".{run}.{who}.{}", std::process::id()));
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&tmp, &at))
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        tracing::warn!("the run's time was not saved: {e}");
    }
}

enum Cited {
    Url(String),
    Note(String),
}

/// The link (a Markdown link's URL or a wikilink's target) at byte `offset` of `text`.
fn link_at(text: &str, offset: usize) -> Option<Cited> {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = &text[line_start..line_end];
    let at = offset - line_start;
    for (i, _) in line.match_indices("[[") {
        let Some(len) = line[i..].find("]]") else { continue };
        if (i..=i + len + 2).contains(&at) {
            let inner = &line[i + 2..i + len];
            let target = inner.split(['|', '#']).next().unwrap_or(inner).trim();
            return Some(Cited::Note(target.to_string()));
        }
    }
    for (i, _) in line.match_indices("](") {
        let Some(open) = line[..i].rfind('[') else { continue };
        let Some(close) = line[i..].find(')').map(|c| i + c) else {
            continue;
        };
        if (open..=close).contains(&at) {
            let url = line[i + 2..close].trim();
            let url = url.split_whitespace().next().unwrap_or(url).trim_matches(['<', '>']);
            return Some(Cited::Url(url.to_string()));
        }
    }
    None
}

/// The bytes of the first line of `text` (from `from`) whose trimmed content is `wanted`,
/// trimmed.
fn line_range(text: &str, wanted: &str, from: usize) -> Option<Range<usize>> {
    let wanted = wanted.trim();
    if wanted.is_empty() {
        return None;
    }
    let mut at = from;
    for line in text[from..].split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if body.trim() == wanted {
            let lead = body.len() - body.trim_start().len();
            return Some(at + lead..at + lead + wanted.len());
        }
        at += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_under_the_cursor() {
        let line = "See [USDA](https://usda.example/k) and [[Koji#x|k]].";
        let at = |s: &str| line.find(s).unwrap();
        assert!(matches!(link_at(line, at("USDA")), Some(Cited::Url(u)) if u == "https://usda.example/k"));
        assert!(matches!(link_at(line, at("Koji")), Some(Cited::Note(t)) if t == "Koji"));
        assert!(link_at(line, at("See")).is_none());
    }

    /// The same research on two copies of a vault is one run; each copy's note keeps its own
    /// time (issue 41, point 12).
    #[test]
    fn a_runs_time_is_its_own_notes() {
        let data = tempfile::tempdir().unwrap();
        let (a, b) = (data.path().join("copy-a/Koji.md"), data.path().join("copy-b/Koji.md"));
        let home = data.path().to_string_lossy().into_owned();
        let env = std::collections::HashMap::from([
            ("HOME".to_string(), home.clone()),
            ("SCHOLIA_DATA_DIR".to_string(), format!("{home}/data")),
        ]);
        let engine = Engine::load(&env, None, None).unwrap();
        let dir = engine.settings.dirs.data.clone();
        std::fs::create_dir_all(dir.join("provenance")).unwrap();
        let (ka, kb) = (note_key(&a), note_key(&b));
        assert_ne!(ka, kb);
        std::fs::write(dir.join(format!("provenance/run1.{ka}.at")), "2026-11-25T12:02Z").unwrap();
        std::fs::write(dir.join(format!("provenance/run1.{kb}.at")), "2026-11-25T12:16Z").unwrap();
        assert_eq!(engine.run_time("run1", &a).as_deref(), Some("2026-11-25T12:02Z"));
        assert_eq!(engine.run_time("run1", &b).as_deref(), Some("2026-11-25T12:16Z"));
        save_time(&dir, "run1", &kb);
        let now = engine.run_time("run1", &b).unwrap();
        assert!(now.as_str() > "2026-11-25T12:16Z", "{now}");
        assert_eq!(engine.run_time("run1", &a).as_deref(), Some("2026-11-25T12:02Z"));
        assert_eq!(engine.run_time("../x", &a), None);
    }

    #[test]
    fn claim_lines_match_whole_lines_only() {
        let text = "# K\n\n- It keeps for a year.\n- It keeps for a year at best.\n";
        let r = line_range(text, "- It keeps for a year.", 0).unwrap();
        assert_eq!(&text[r], "- It keeps for a year.");
        assert!(line_range(text, "- It keeps", 0).is_none());
    }
}
