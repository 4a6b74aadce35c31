//! The vault's tools — find_notes, read_note, list_notes — and fetch_page: instant, free, read
//! only.

use rmcp::model::ToolAnnotations;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::Scholia;
use crate::mcp::progress::RunContext;
use crate::mcp::tool::{MAX_TEXT, Reply, Tool, reads_vault};
use scholia_base::{Error, Summary};
use scholia_engine::BoxFuture;
use scholia_engine::defaults;
use scholia_index::{Hit, NoteContent, NoteList, PAGE_CHARS};
use scholia_providers::web::fetch::Page;

pub struct FindNotes;

#[derive(Deserialize, JsonSchema)]
pub struct FindNotesInput {
    /// Words to search for; "quoted phrase" for exact wording; title:word to search titles only
    query: String,
    /// How many notes at most
    #[serde(default = "ten")]
    #[schemars(range(min = 1, max = 50))]
    limit: u32,
    /// lexical (words, BM25), semantic (meaning, when the vault has vectors) or hybrid (both,
    /// fused); leave out for hybrid when the vault has vectors, else lexical. Quoted phrases
    /// and title: queries are always lexical
    mode: Option<scholia_index::SearchMode>,
}

fn ten() -> u32 {
    defaults::SEARCH_LIMIT
}

/// The notes that match, best first.
#[derive(Serialize, JsonSchema)]
pub struct Found {
    pub query: String,
    pub results: Vec<Hit>,
    /// How the results were ranked: lexical, semantic or hybrid.
    pub mode: scholia_index::SearchMode,
    /// Why meaning was not used when it was asked for (no embeddings, endpoint down).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Summary for Found {
    fn summary(&self) -> String {
        match self.results.len() {
            0 => format!("no notes match `{}`", self.query),
            1 => format!("1 note matches `{}`", self.query),
            n => format!("{n} notes match `{}`", self.query),
        }
    }
}

impl Tool for FindNotes {
    type Input = FindNotesInput;
    type Output = Found;
    const NAME: &'static str = "find_notes";
    const TITLE: &'static str = "Find notes";

    fn description() -> String {
        "Search the user's vault: by words (BM25 over titles, headings, tags and text; \
         \"quoted phrases\", title:word) and, when the vault has embeddings, by meaning too, fused \
         (`mode`). Use this first whenever the question may be answered by \
         the user's own notes: it is instant and free. Returns paths to pass to read_note."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        reads_vault()
    }

    fn run(s: &Scholia, a: FindNotesInput, _: RunContext) -> BoxFuture<'_, Result<Reply<Found>, Error>> {
        Box::pin(async move {
            let vault = s.vault().await?;
            let found = vault.search(&a.query, a.limit as usize, a.mode).await?;
            let text: Vec<String> = found
                .hits
                .iter()
                .map(|h| {
                    let at = h.heading.as_deref().map(|x| format!(" § {x}")).unwrap_or_default();
                    format!("- {} ({}{at}, score {:.2}): {}", h.path, h.title, h.score, h.snippet)
                })
                .collect();
            let value = Found {
                query: a.query,
                results: found.hits,
                mode: found.mode,
                warnings: found.warnings,
            };
            Ok(Reply::new(value, text.join("\n")))
        })
    }
}

pub struct ReadNote;

#[derive(Deserialize, JsonSchema)]
pub struct ReadNoteInput {
    /// A note path relative to the vault, e.g. `Projects/Koji.md`
    path: String,
    /// Only the section under this heading (any level)
    heading: Option<String>,
    /// Character to start from (the previous result's next_offset)
    #[serde(default)]
    offset: usize,
    /// Only the note's outline: its headings with their sections' sizes in characters (read
    /// this first, then one section); every read returns the note's hash
    #[serde(default)]
    outline: bool,
}

impl Tool for ReadNote {
    type Input = ReadNoteInput;
    type Output = NoteContent;
    const NAME: &'static str = "read_note";
    const TITLE: &'static str = "Read a note";

    fn description() -> String {
        format!(
            "Read a note of the vault, or only the section under one heading, or (outline=true) its \
             headings with their sizes: read the outline first, then one section. Every read \
             returns the note's hash, which edit_note needs to replace. Long notes come in \
             pages of {PAGE_CHARS} characters: call again with `offset` set to `next_offset`. After \
             research_note, read its findings with heading \"Research\"."
        )
    }

    fn annotations() -> ToolAnnotations {
        reads_vault()
    }

    fn run(s: &Scholia, a: ReadNoteInput, _: RunContext) -> BoxFuture<'_, Result<Reply<NoteContent>, Error>> {
        Box::pin(async move {
            let vault = s.vault().await?;
            let note = vault
                .read_note(&a.path, a.heading.as_deref(), a.offset, PAGE_CHARS, a.outline)
                .await?;
            let text = match &note.outline {
                Some(o) => o
                    .iter()
                    .map(|h| {
                        format!(
                            "{} {} (line {}, {} characters)",
                            "#".repeat(h.level as usize),
                            h.heading,
                            h.line,
                            h.chars
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
                None => note.content.clone(),
            };
            Ok(Reply::new(note, text))
        })
    }
}

pub struct ListNotes;

#[derive(Deserialize, JsonSchema)]
pub struct ListNotesInput {
    /// Only notes under this folder, e.g. `Journal`
    folder: Option<String>,
    /// Only notes with this tag (with or without #); `project` also matches `project/alpha`
    tag: Option<String>,
    /// Where to start (the previous result's next_offset)
    #[serde(default)]
    offset: usize,
    /// How many notes at most
    #[serde(default = "fifty")]
    #[schemars(range(min = 1, max = 200))]
    limit: u32,
}

fn fifty() -> u32 {
    defaults::LIST_LIMIT
}

impl Tool for ListNotes {
    type Input = ListNotesInput;
    type Output = NoteList;
    const NAME: &'static str = "list_notes";
    const TITLE: &'static str = "List notes";

    fn description() -> String {
        "List the vault's notes by path, optionally only those in a folder or carrying a tag \
         (nested tags included). Paged: pass `offset` = the previous `next_offset`."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        reads_vault()
    }

    fn run(s: &Scholia, a: ListNotesInput, _: RunContext) -> BoxFuture<'_, Result<Reply<NoteList>, Error>> {
        Box::pin(async move {
            let vault = s.vault().await?;
            let list = vault
                .list_notes(a.folder.as_deref(), a.tag.as_deref(), a.offset, a.limit as usize)
                .await?;
            let text: Vec<String> = list
                .notes
                .iter()
                .map(|n| format!("- {} ({})", n.path, n.title))
                .collect();
            Ok(Reply::new(list, text.join("\n")))
        })
    }
}

pub struct FetchPage;

#[derive(Deserialize, JsonSchema)]
pub struct FetchPageInput {
    /// An http(s) URL
    url: String,
    /// Characters of content at most
    #[serde(default = "twenty_thousand")]
    #[schemars(range(min = 1, max = 24000))]
    max_chars: usize,
}

fn twenty_thousand() -> usize {
    defaults::PAGE_CHARS
}

const _: () = assert!(MAX_TEXT == 24_000, "fetch_page's max_chars range is MAX_TEXT");

impl Tool for FetchPage {
    type Input = FetchPageInput;
    type Output = Page;
    const NAME: &'static str = "fetch_page";
    const TITLE: &'static str = "Read a web page";

    fn description() -> String {
        "Fetch a web page and return its main content as Markdown (navigation and boilerplate \
         removed), the way research reads pages. Only public http(s) addresses are fetched."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        reads_vault().open_world(true)
    }

    fn run(s: &Scholia, a: FetchPageInput, _: RunContext) -> BoxFuture<'_, Result<Reply<Page>, Error>> {
        Box::pin(async move {
            let page = s.engine.fetch_page(&a.url, a.max_chars).await?;
            let title = page
                .content
                .title
                .clone()
                .map(|t| format!("# {t}\n\n"))
                .unwrap_or_default();
            let text = format!("{title}{}", page.content.markdown);
            Ok(Reply::new(page, text))
        })
    }
}
