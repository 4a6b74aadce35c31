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
    /// The CPU time (every thread's) of `index`.
    pub index_cpu: Duration,
}

/// CPU time, user and system, of this process's threads (`libc::RUSAGE_SELF`) or of the
/// children it has waited for (`libc::RUSAGE_CHILDREN`).
pub fn cpu(who: libc::c_int) -> Duration {
    // SAFETY: getrusage writes one `rusage` into the zeroed value it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut usage);
        usage
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// `f`'s wall and CPU time (this process's, every thread).
fn clocked<T>(f: impl FnOnce() -> T) -> (T, Duration, Duration) {
    let (started, cpu_before) = (Instant::now(), cpu(libc::RUSAGE_SELF));
    let out = f();
    (out, started.elapsed(), cpu(libc::RUSAGE_SELF) - cpu_before)
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
    let ((), index, index_cpu) = clocked(|| {
        for text in texts {
            writer.add_document(doc!(body => text)).unwrap();
        }
        writer.commit().unwrap();
    });
    Floor { read, index, index_cpu }
}

/// A row of [`ladder`]: what was timed, its wall time and its CPU time.
pub struct Step {
    pub name: &'static str,
    pub wall: Duration,
    pub cpu: Duration,
}

/// What a cold build's parts cost, apart, in wall and CPU time: a build's producers (reading,
/// parsing, making documents: one thread each here), then tantivy on scholia's documents made
/// beforehand, with every field and then with groups of fields left unindexed. Run with
/// `--ladder`.
pub fn ladder(b: &Bench) -> Vec<Step> {
    use scholia::index::schema::{self, IndexedNote};
    let root = b.vault.canonicalize().unwrap();
    let (full, f) = schema::build();
    let notes = scholia::vault::scan::scan(&root).notes;
    let mut steps = Vec::new();
    // Times `f` as the step `name`.
    let mut step = |name: &'static str, f: &mut dyn FnMut()| {
        let ((), wall, cpu) = clocked(f);
        steps.push(Step { name, wall, cpu });
    };
    let mut texts = Vec::new();
    step("producers: reading the notes", &mut || {
        texts = notes
            .iter()
            .filter_map(|n| Some((n, std::fs::read_to_string(root.join(&n.rel)).ok()?)))
            .collect();
    });
    let mut parsed = Vec::new();
    step("producers: parsing them", &mut || {
        parsed = texts
            .iter()
            .map(|(n, text)| (*n, IndexedNote::parse(text, &n.rel)))
            .collect();
    });
    let mut docs: Vec<TantivyDocument> = Vec::new();
    step("producers: documents (stems, names)", &mut || {
        docs = parsed
            .iter()
            .map(|(n, note)| schema::document(&f, &n.rel, n.stamp, note))
            .collect();
    });
    drop((texts, parsed));
    let groups: [(&'static str, Vec<tantivy::schema::Field>); 5] = [
        ("tantivy on scholia's documents: every field", vec![]),
        ("tantivy: without stems", vec![f.stems]),
        ("tantivy: without title/heading prefixes", vec![f.sym_title, f.sym_head]),
        (
            "tantivy: without stems and prefixes",
            vec![f.stems, f.sym_title, f.sym_head],
        ),
        (
            "tantivy: body alone (scholia's tokenizer)",
            full.fields().map(|(field, _)| field).filter(|x| *x != f.body).collect(),
        ),
    ];
    steps.extend(groups.into_iter().map(|(name, unindexed)| {
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
        let ((), wall, cpu) = clocked(|| {
            for d in batch {
                writer.add_document(d).unwrap();
            }
            writer.commit().unwrap();
        });
        Step { name, wall, cpu }
    }));
    steps
}
