//! The benchmark's vaults: copies of obsidian-help (one, or sixteen side by side for 100,000
//! notes of real text) and a generated one.

use std::path::Path;

/// Copies `from` into `to` (files and folders; `.`-entries kept: they are what a vault holds).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).unwrap();
            // The shared vault is read-only; its copy is written to (research, saves).
            let mut perms = std::fs::metadata(&target).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&target, perms).unwrap();
        }
    }
}

/// `copies` copies of `from` under `to/copy-NN`, reused when already there.
pub fn replicate(from: &Path, to: &Path, copies: usize) {
    for i in 0..copies {
        let dir = to.join(format!("copy-{i:02}"));
        if !dir.is_dir() {
            let part = to.join(format!(".partial-{i:02}"));
            let _ = std::fs::remove_dir_all(&part);
            copy_tree(from, &part);
            std::fs::rename(&part, &dir).unwrap();
        }
    }
}

/// A deterministic synthetic vault: folders, frontmatter, headings, wikilinks, tags, and
/// Zipf-distributed words from an invented vocabulary.
pub fn generate(root: &Path, n: usize) {
    let mut rng = 0x2545F4914F6CDD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ren", "sa", "tor", "vel", "an", "qui", "des", "mar", "no", "pe", "ri", "sun", "tal", "ex",
        "bo", "gra", "fi",
    ];
    let vocab: Vec<String> = (0..6000u64)
        .map(|i| {
            let mut w = String::new();
            let mut x = i * 7919 + 13;
            for _ in 0..(2 + i % 3) {
                w.push_str(SYLLABLES[(x % SYLLABLES.len() as u64) as usize]);
                x /= SYLLABLES.len() as u64;
                x += i;
            }
            w
        })
        .collect();
    let word = |next: &mut dyn FnMut() -> u64| -> &str {
        // Zipf-like: small indices are much more frequent.
        let r = (next() % 1_000_000) as f64 / 1_000_000.0;
        let idx = ((vocab.len() as f64).powf(r) - 1.0) as usize;
        &vocab[idx.min(vocab.len() - 1)]
    };
    let title = |i: usize| format!("Note {i} {}", vocab[(i * 31) % vocab.len()]);
    for i in 0..n {
        let dir = root.join(format!("area-{:02}/topic-{:03}", i % 20, i % 500));
        if i < 500 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let mut text = format!(
            "---\ntags: [{}, {}]\n---\n\n# {}\n\n",
            word(&mut next),
            word(&mut next),
            title(i)
        );
        let sections = 2 + next() % 4;
        for s in 0..sections {
            text.push_str(&format!("## {} {}\n\n", word(&mut next), word(&mut next)));
            let words = 40 + next() % 120;
            for k in 0..words {
                text.push_str(word(&mut next));
                text.push(if k % 15 == 14 { '\n' } else { ' ' });
            }
            let target = (next() as usize) % n;
            text.push_str(&format!("\nSee [[{}]] and #{}.\n\n", title(target), word(&mut next)));
            if s == 0 {
                text.push_str("- a list item\n- another\n\n");
            }
        }
        std::fs::write(dir.join(format!("{}.md", title(i))), text).unwrap();
    }
}
