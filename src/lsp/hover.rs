//! Hover (a wikilink's target, a citation's source) and the note's outline.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;

use super::State;
use super::documents::Document;
use super::errors;
use scholia_index::Texts;
use scholia_vault::parse;

/// Characters of a hover's excerpt.
const HOVER_CHARS: usize = 1_200;

/// Hover on a wikilink: the target's title and its opening paragraph, or the linked heading's
/// section, bounded.
pub async fn hover(state: &State, uri: Uri, pos: Position) -> RpcResult<Option<Hover>> {
    let Some(text) = state.text(&uri).await else {
        return Ok(None);
    };
    let doc = Document::new(text, 0);
    let enc = state.encoding();
    let offset = doc.offset(pos, enc);
    // A citation in `## Research`: where it was read and what the run was given of it.
    if let Some(engine) = state.engine_now() {
        let t = doc.text.clone();
        if let Some(c) = scholia_base::spawn_blocking(move || engine.citation_at(&t, offset)).await {
            return Ok(Some(Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: citation(&c),
                }),
                range: None,
            }));
        }
    }
    let parsed = parse::parse(&doc.text, "");
    let Some(link) = parsed
        .links
        .iter()
        .find(|l| l.range.start <= offset && offset < l.range.end)
    else {
        return Ok(None);
    };
    let Some(index) = state.index() else { return Ok(None) };
    let rel = state.rel(&uri).await.unwrap_or_default();
    let texts = state.snapshot(index.clone());
    let l = link.clone();
    let shown = scholia_base::blocking(move || -> Result<Option<String>, scholia_base::Error> {
        let target = if l.target.trim().is_empty() {
            rel.clone()
        } else {
            match index.resolve_parsed(&l, &rel)? {
                Some(n) => n.path,
                None => return Ok(Some(format!("No note named `{}` in the vault.", l.target.trim()))),
            }
        };
        let Some(text) = texts.text(&target) else {
            return Ok(None);
        };
        Ok(Some(excerpt(&target, &text, l.heading.as_deref())))
    })
    .await
    .map_err(|e| errors::rpc(&e))?;
    Ok(shown.map(|value| Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: Some(doc.range(link.range.clone(), enc)),
    }))
}

/// A cited source as the run that cited it read it: title, where, the passage (inert).
fn citation(c: &scholia_engine::provenance::Citation) -> String {
    use scholia_vault::contain;
    let s = &c.source;
    let place = match (&s.url, &s.note) {
        (Some(u), _) => format!("Read from `{}`", u.replace('`', "")),
        (None, Some(n)) => format!("From the note `{}`", n.replace('`', "")),
        (None, None) => "Source".into(),
    };
    let passage = if s.passage.is_empty() {
        "(no passage was kept)".to_string()
    } else {
        let mut p = contain::quote(&s.passage);
        if p.chars().count() > HOVER_CHARS {
            p = p.chars().take(HOVER_CHARS).collect::<String>() + "…";
        }
        format!("> {p}")
    };
    let model = match c.stamp.model.as_str() {
        "none" => String::new(),
        m => format!(", {m}"),
    };
    format!(
        "**{}**\n\n{place}\n\n{passage}\n\n*Cited by the research of {} ({}{model})*",
        contain::text(&s.title),
        c.when.replace('T', " ").replace('Z', " UTC"),
        c.stamp.depth
    )
}

/// The title of `rel` and its first paragraph (or the section of `heading`), cut at
/// [`HOVER_CHARS`].
fn excerpt(rel: &str, text: &str, heading: Option<&str>) -> String {
    let parsed = parse::parse(text, scholia_vault::stem(rel));
    let body = match heading {
        Some(h) => {
            let wanted = scholia_index::last_heading(h);
            match parsed
                .headings
                .iter()
                .find(|x| scholia_index::same_heading(&x.text, wanted))
            {
                Some(x) => text[x.section.clone()].to_string(),
                None => format!("No heading `{wanted}` in this note."),
            }
        }
        None => first_paragraph(text, &parsed),
    };
    let mut body: String = body.trim().to_string();
    if body.chars().count() > HOVER_CHARS {
        body = body.chars().take(HOVER_CHARS).collect::<String>() + "…";
    }
    format!("**{}** · `{rel}`\n\n{body}", parsed.title.replace(['*', '`'], ""))
}

/// The first block of text after the front matter and the title heading.
fn first_paragraph(text: &str, parsed: &parse::ParsedNote) -> String {
    let start = parsed.frontmatter.as_ref().map_or(0, |f| f.range.end);
    let mut paragraph = Vec::new();
    for line in text[start.min(text.len())..].lines() {
        let t = line.trim();
        if paragraph.is_empty() && (t.is_empty() || t.starts_with("# ")) {
            continue;
        }
        if t.is_empty() || (t.starts_with('#') && !paragraph.is_empty()) {
            break;
        }
        paragraph.push(line);
    }
    paragraph.join("\n")
}

/// The note's outline, nested by heading level.
pub async fn document_symbols(state: &State, uri: Uri) -> RpcResult<Option<DocumentSymbolResponse>> {
    let Some(text) = state.text(&uri).await else {
        return Ok(None);
    };
    let doc = Document::new(text, 0);
    let enc = state.encoding();
    let parsed = parse::parse(&doc.text, "");
    // (level, symbol) stack: a heading closes every open one of its level or deeper.
    let mut stack: Vec<(u8, DocumentSymbol)> = Vec::new();
    let mut roots: Vec<DocumentSymbol> = Vec::new();
    let close = |stack: &mut Vec<(u8, DocumentSymbol)>, roots: &mut Vec<DocumentSymbol>| {
        let (_, done) = stack.pop().expect("open");
        match stack.last_mut() {
            Some((_, parent)) => parent.children.get_or_insert_with(Vec::new).push(done),
            None => roots.push(done),
        }
    };
    for h in parsed.headings.iter().filter(|h| h.top_level) {
        while stack.last().is_some_and(|(l, _)| *l >= h.level) {
            close(&mut stack, &mut roots);
        }
        let line_end = doc.text[h.section.start..]
            .find('\n')
            .map_or(doc.text.len(), |i| h.section.start + i);
        #[allow(deprecated)]
        let symbol = DocumentSymbol {
            name: if h.text.is_empty() {
                "(empty heading)".into()
            } else {
                h.text.clone()
            },
            detail: Some("#".repeat(h.level as usize)),
            kind: if h.level == 1 {
                SymbolKind::FILE
            } else {
                SymbolKind::STRING
            },
            tags: None,
            deprecated: None,
            range: doc.range(h.section.clone(), enc),
            selection_range: doc.range(h.section.start..line_end, enc),
            children: None,
        };
        stack.push((h.level, symbol));
    }
    while !stack.is_empty() {
        close(&mut stack, &mut roots);
    }
    Ok(Some(DocumentSymbolResponse::Nested(roots)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_bounded() {
        let long = format!("# Long\n\n{}\n\nSecond paragraph.\n", "word ".repeat(1000));
        let shown = excerpt("Long.md", &long, None);
        assert!(shown.starts_with("**Long** · `Long.md`\n\nword word"), "{shown}");
        assert!(shown.ends_with('…') && !shown.contains("Second"), "{shown}");
        let text = "# T\n\nIntro.\n\n## Part\nInside part.\n\n## Next\nNo.\n";
        assert_eq!(
            excerpt("T.md", text, Some("part")),
            "**T** · `T.md`\n\n## Part\nInside part."
        );
        assert_eq!(excerpt("T.md", text, None), "**T** · `T.md`\n\nIntro.");
    }
}
