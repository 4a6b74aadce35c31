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

/// tantivy's time for scholia's own documents, made beforehand (no parsing timed), with every
/// field and then with groups of fields left unindexed: what each group costs a cold build.
/// Run with `--ladder`.
pub fn ladder(b: &Bench) -> Vec<(&'static str, Duration)> {
    use scholia::index::schema::{self, IndexedNote};
    let root = b.vault.canonicalize().unwrap();
    let (full, f) = schema::build();
    let docs: Vec<TantivyDocument> = scholia::vault::scan::scan(&root)
        .notes
        .iter()
        .filter_map(|n| {
            let text = std::fs::read_to_string(root.join(&n.rel)).ok()?;
            let note = IndexedNote::parse(&text, &n.rel);
            Some(schema::document(&f, &n.rel, n.stamp, &note))
        })
        .collect();
    let groups: [(&'static str, Vec<tantivy::schema::Field>); 5] = [
        ("every field", vec![]),
        ("without stems", vec![f.stems]),
        ("without title/heading prefixes", vec![f.sym_title, f.sym_head]),
        ("without stems and prefixes", vec![f.stems, f.sym_title, f.sym_head]),
        (
            "body alone (scholia's tokenizer)",
            full.fields().map(|(field, _)| field).filter(|x| *x != f.body).collect(),
        ),
    ];
    groups
        .into_iter()
        .map(|(name, unindexed)| {
            // The same fields in the same order, those left out neither indexed nor stored.
            let mut builder = Schema::builder();
            for (field, entry) in full.fields() {
                if unindexed.contains(&field) {
                    builder.add_field(tantivy::schema::FieldEntry::new_text(
                        entry.name().to_string(),
                        tantivy::schema::TextOptions::default(),
                    ));
                } else {
                    builder.add_field(entry.clone());
                }
            }
            let dir = tempfile::tempdir().unwrap();
            let index = Index::create_in_dir(dir.path(), builder.build()).unwrap();
            scholia::index::tokenizer::register(index.tokenizers(), Default::default());
            let options = scholia::index::WriterOptions::default().tantivy();
            let mut writer: IndexWriter<TantivyDocument> = index.writer_with_options(options).unwrap();
            writer.set_merge_policy(Box::new(tantivy::merge_policy::NoMergePolicy));
            let batch = docs.clone();
            let started = Instant::now();
            for d in batch {
                writer.add_document(d).unwrap();
            }
            writer.commit().unwrap();
            (name, started.elapsed())
        })
        .collect()
}
