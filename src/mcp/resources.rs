//! The vault's notes as MCP resources: `note:///<path>` URIs, listed a page at a time and
//! read as a note is by `read_note`, within the caller's scope.

use rmcp::ErrorData;
use rmcp::model::{
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents,
};

use super::Scholia;
use scholia_base::Error;

/// `note:///<vault-relative path>`, percent-encoded.
fn note_uri(rel: &str) -> String {
    let encoded: Vec<String> = rel
        .split('/')
        .map(|seg| {
            url::form_urlencoded::byte_serialize(seg.as_bytes())
                .collect::<String>()
                .replace('+', "%20")
        })
        .collect();
    format!("note:///{}", encoded.join("/"))
}

/// The vault-relative path of a `note:///` URI.
fn note_path(uri: &str) -> Result<String, Error> {
    let invalid = || {
        Error::invalid(format!(
            "uri: `{uri}` is not valid; valid: note:///<path of a note in the vault>"
        ))
    };
    let rest = uri.strip_prefix("note:///").ok_or_else(invalid)?;
    let decoded = url::Url::parse(&format!("file:///{rest}"))
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .ok_or_else(invalid)?;
    Ok(decoded.to_string_lossy().trim_start_matches('/').to_string())
}

const RESOURCES_PER_PAGE: usize = 200;

impl Scholia {
    pub(super) async fn resources(
        &self,
        request: Option<PaginatedRequestParams>,
    ) -> Result<ListResourcesResult, ErrorData> {
        if !self.offers_resources() {
            return Ok(ListResourcesResult::with_all_items(Vec::new()));
        }
        let offset = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .map_err(|_| ErrorData::invalid_params(format!("cursor `{c}` is not one this server gave"), None))?,
        };
        let vault = self
            .vault()
            .await
            .map_err(|e| ErrorData::internal_error(e.message, None))?;
        let list = vault
            .list_notes(None, None, offset, RESOURCES_PER_PAGE)
            .await
            .map_err(|e| ErrorData::internal_error(e.message, None))?;
        let resources = list
            .notes
            .into_iter()
            .map(|n| {
                Resource::new(note_uri(&n.path), n.path.clone())
                    .with_title(n.title)
                    .with_mime_type("text/markdown")
            })
            .collect();
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = list.next_offset.map(|n| n.to_string());
        Ok(result)
    }

    pub(super) async fn resource(&self, request: ReadResourceRequestParams) -> Result<ReadResourceResponse, ErrorData> {
        if !self.offers_resources() {
            return Err(self.no_resources());
        }
        let fail = |e: Error| ErrorData::invalid_params(e.message, None);
        let path = note_path(&request.uri).map_err(fail)?;
        let vault = self.vault().await.map_err(fail)?;
        let mut note = vault
            .read_note(&path, None, 0, scholia_index::PAGE_CHARS, false)
            .await
            .map_err(fail)?;
        if let Some(next) = note.next_offset {
            note.content.push_str(&format!(
                "\n\n[… {next} of {} characters; read the rest with read_note(path=\"{}\", offset={next})]",
                note.total_chars, note.path
            ));
        }
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(vec![
            ResourceContents::text(note.content, request.uri).with_mime_type("text/markdown"),
        ])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_uris_round_trip() {
        for rel in [
            "Koji.md",
            "Journal/Bread log.md",
            "Notes/100% rye & spelt.md",
            "日本語/メモ.md",
        ] {
            assert_eq!(note_path(&note_uri(rel)).unwrap(), rel, "{}", note_uri(rel));
        }
        assert_eq!(note_uri("Journal/Bread log.md"), "note:///Journal/Bread%20log.md");
        assert!(note_path("file:///etc/passwd").is_err());
    }
}
