//! The floor under a cold build: what tantivy alone takes to index the vault's text, with no
//! parsing and one field, so the CLI's figure can be read against the machine's limit.

use std::time::{Duration, Instant};

use tantivy::schema::{Schema, TEXT};
use tantivy::{Index, IndexWriter, TantivyDocument, doc};

use super::Bench;

pub struct Floor {
    /// Reading every note into memory, one thread.
    pub read: Duration,
    /// tantivy indexing those texts as one field with its default tokenizer (positions on,
    /// nothing stored), with the writer threads and memory scholia's writer has.
    pub index: Duration,
}

pub fn measure(b: &Bench) -> Floor {
    let root = b.vault.canonicalize().unwrap();
    let started = Instant::now();
    let texts: Vec<String> = scholia::vault::scan::scan(&root)
        .notes
        .iter()
        .filter_map(|n| std::fs::read_to_string(root.join(&n.rel)).ok())
        .collect();
    let read = started.elapsed();

    let mut schema = Schema::builder();
    let body = schema.add_text_field("body", TEXT);
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create_in_dir(dir.path(), schema.build()).unwrap();
    let options = scholia::index::WriterOptions::default().tantivy();
    let mut writer: IndexWriter<TantivyDocument> = index.writer_with_options(options).unwrap();
    // As scholia's cold build: no merges.
    writer.set_merge_policy(Box::new(tantivy::merge_policy::NoMergePolicy));
    let started = Instant::now();
    for text in texts {
        writer.add_document(doc!(body => text)).unwrap();
    }
    writer.commit().unwrap();
    Floor {
        read,
        index: started.elapsed(),
    }
}
