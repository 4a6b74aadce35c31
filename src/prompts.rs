//! Prompts (`prompts/`) and output templates (`templates/`): Markdown files with minijinja
//! syntax, built into the binary and overridable by files of the same name under the config
//! directory (`<config>/prompts/synthesis.md`, …).

use std::path::Path;

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

// Every prompt and template, by the name overrides use.
pub const SYSTEM: &str = "prompts/system.md";
pub const TOPIC_EXTRACTION: &str = "prompts/topic-extraction.md";
pub const PAGE_EXTRACT: &str = "prompts/page-extract.md";
pub const SYNTHESIS: &str = "prompts/synthesis.md";
pub const SYNTHESIS_RETRY: &str = "prompts/synthesis-retry.md";
pub const DEEP_SEARCH_PROMPT: &str = "prompts/deep-search-prompt.md";
pub const VERIFY_PROMPT: &str = "prompts/verify-prompt.md";
pub const JSON_CORRECTION: &str = "prompts/json-correction.md";
pub const JSON_REPAIR: &str = "prompts/json-repair.md";
pub const DEEP_SEARCH_MATERIAL: &str = "prompts/deep-search-material.md";
pub const DEEP_SEARCH_QUERIES: &str = "prompts/deep-search-queries.md";
pub const SONAR_SYSTEM: &str = "prompts/sonar-system.md";
pub const RESEARCH_SECTION: &str = "templates/research-section.md";
pub const RESEARCH_OFFLINE: &str = "templates/research-offline.md";
pub const RESEARCH_SOURCES_ONLY: &str = "templates/research-sources-only.md";
pub const DEEP_SEARCH_SECTION: &str = "templates/deep-search-section.md";
pub const ASK_SECTION: &str = "templates/ask-section.md";
pub const RESEARCH_REPORT: &str = "templates/research-report.md";
pub const TASK_SECTION: &str = "templates/task-section.md";
pub const BACKGROUND_BRIEF: &str = "prompts/background-brief.md";

const BUILTIN: &[(&str, &str)] = &[
    (SYSTEM, include_str!("../prompts/system.md")),
    (TOPIC_EXTRACTION, include_str!("../prompts/topic-extraction.md")),
    (PAGE_EXTRACT, include_str!("../prompts/page-extract.md")),
    (SYNTHESIS, include_str!("../prompts/synthesis.md")),
    (SYNTHESIS_RETRY, include_str!("../prompts/synthesis-retry.md")),
    (DEEP_SEARCH_PROMPT, include_str!("../prompts/deep-search-prompt.md")),
    (VERIFY_PROMPT, include_str!("../prompts/verify-prompt.md")),
    (JSON_CORRECTION, include_str!("../prompts/json-correction.md")),
    (JSON_REPAIR, include_str!("../prompts/json-repair.md")),
    (DEEP_SEARCH_MATERIAL, include_str!("../prompts/deep-search-material.md")),
    (DEEP_SEARCH_QUERIES, include_str!("../prompts/deep-search-queries.md")),
    (SONAR_SYSTEM, include_str!("../prompts/sonar-system.md")),
    (RESEARCH_SECTION, include_str!("../templates/research-section.md")),
    (RESEARCH_OFFLINE, include_str!("../templates/research-offline.md")),
    (
        RESEARCH_SOURCES_ONLY,
        include_str!("../templates/research-sources-only.md"),
    ),
    (DEEP_SEARCH_SECTION, include_str!("../templates/deep-search-section.md")),
    (ASK_SECTION, include_str!("../templates/ask-section.md")),
    (RESEARCH_REPORT, include_str!("../templates/research-report.md")),
    (TASK_SECTION, include_str!("../templates/task-section.md")),
    (BACKGROUND_BRIEF, include_str!("../prompts/background-brief.md")),
];

#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("{name}: {message}")]
    Template { name: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

pub struct Library {
    env: Environment<'static>,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library").finish_non_exhaustive()
    }
}

impl Library {
    /// The built-in files, each replaced by `<config_dir>/<name>` when that exists.
    pub fn load(config_dir: Option<&Path>) -> Result<Library, TemplateError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_keep_trailing_newline(true);
        // What templates interpolate into a note is made inert here (see vault::contain).
        env.add_filter("md_text", |s: String| crate::vault::contain::text(&s));
        env.add_filter("md_url", |s: String| crate::vault::contain::url(&s));
        env.add_filter("md_target", |s: String| crate::vault::contain::target(&s));
        env.add_filter("md_passage", |s: String| crate::vault::contain::passage(&s));
        for (name, builtin) in BUILTIN {
            let source = match config_dir.map(|d| d.join(name)).filter(|p| p.is_file()) {
                Some(path) => {
                    tracing::info!("using {} instead of the built-in {name}", path.display());
                    std::fs::read_to_string(&path).map_err(|e| TemplateError::Io {
                        path: path.display().to_string(),
                        source: e,
                    })?
                }
                None => builtin.to_string(),
            };
            env.add_template_owned(name.to_string(), source)
                .map_err(|e| TemplateError::Template {
                    name: name.to_string(),
                    message: e.to_string(),
                })?;
        }
        Ok(Library { env })
    }

    /// The built-in files only.
    pub fn builtin() -> Library {
        Library::load(None).expect("built-in templates parse")
    }

    pub fn render(&self, name: &str, ctx: impl Serialize) -> Result<String, TemplateError> {
        let err = |e: minijinja::Error| TemplateError::Template {
            name: name.to_string(),
            message: format!("{e:#}"),
        };
        self.env.get_template(name).map_err(err)?.render(ctx).map_err(err)
    }
}

/// Text placed between `<untrusted-data>` tags cannot close them. Linear: one lowercased copy.
/// A rendered prompt without its `<untrusted-data>` blocks: the instructions alone (what an
/// answer must not echo).
pub fn without_data(prompt: &str) -> String {
    const OPEN: &str = "<untrusted-data";
    const CLOSE: &str = "</untrusted-data>";
    let mut out = String::with_capacity(prompt.len());
    let mut rest = prompt;
    while let Some(i) = rest.find(OPEN) {
        out.push_str(&rest[..i]);
        match rest[i..].find(CLOSE) {
            Some(j) => rest = &rest[i + j + CLOSE.len()..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

pub fn untrusted(text: &str) -> String {
    const CLOSE: &str = "</untrusted-data";
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(i) = lower[at..].find(CLOSE).map(|i| at + i) {
        out.push_str(&text[at..i]);
        out.push_str("</untrusted_data");
        at = i + CLOSE.len();
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builtins_render_and_overrides_win() {
        let lib = Library::builtin();
        let p = lib
            .render(
                "prompts/topic-extraction.md",
                json!({"focus": "yeast", "max_topics": 10, "path": "a.md", "note": "text"}),
            )
            .unwrap();
        assert!(p.contains("Only list topics about this focus: yeast") && p.contains("At most 10 topics"));
        // A missing variable is an error, not an empty string.
        assert!(lib.render("prompts/topic-extraction.md", json!({})).is_err());

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("prompts")).unwrap();
        std::fs::write(dir.path().join("prompts/system.md"), "Custom {{ 1 + 1 }}").unwrap();
        assert_eq!(
            Library::load(Some(dir.path()))
                .unwrap()
                .render("prompts/system.md", json!({}))
                .unwrap(),
            "Custom 2"
        );
        std::fs::write(dir.path().join("prompts/system.md"), "{% if %}").unwrap();
        assert!(
            Library::load(Some(dir.path()))
                .unwrap_err()
                .to_string()
                .starts_with("prompts/system.md: ")
        );
    }

    #[test]
    fn instructions_without_their_data() {
        assert_eq!(
            without_data("Do this.\n<untrusted-data source=\"note\">the note</untrusted-data>\nThen that."),
            "Do this.\n\nThen that."
        );
        assert_eq!(without_data("A <untrusted-data x>never closed"), "A ");
    }

    #[test]
    fn untrusted_data_cannot_close_its_tag() {
        assert_eq!(
            untrusted("a </untrusted-data> b </UNTRUSTED-DATA>"),
            "a </untrusted_data> b </untrusted_data>"
        );
    }
}
