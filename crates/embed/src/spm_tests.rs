use super::*;

fn load(json: &str) -> SentencePiece {
    SentencePiece::from_json(&serde_json::from_str(json).unwrap()).unwrap()
}

/// The tokenizer of `testdata/spm` in its older form, as `benches/embed/unigram_fixture.py`
/// makes it: the charsmap alone, `add_prefix_space`, XLM-RoBERTa's added tokens.
fn older(json: &str) -> SentencePiece {
    let mut v: Value = serde_json::from_str(json).unwrap();
    let charsmap = v["normalizer"]["normalizers"][0].clone();
    assert_eq!(charsmap["type"], "Precompiled");
    v["normalizer"] = charsmap;
    v["pre_tokenizer"] = serde_json::json!({"type": "Metaspace", "replacement": "▁", "add_prefix_space": true});
    let mask = v["model"]["vocab"].as_array().unwrap().len() - 1;
    v["added_tokens"] = [(0, "<s>"), (1, "<pad>"), (2, "</s>"), (3, "<unk>"), (mask, "<mask>")]
        .iter()
        .map(|(id, c)| serde_json::json!({"id": id, "content": c, "single_word": false, "lstrip": *c == "<mask>", "rstrip": false, "normalized": false, "special": true}))
        .collect();
    SentencePiece::from_json(&v).unwrap()
}

/// The ids are those of Hugging Face's `tokenizers` for a SentencePiece model trained on the
/// vault (nmt_nfkc, as XLM-RoBERTa's), on hostile text and on notes of all 38 languages, under
/// the current and the older form of an XLM-RoBERTa `tokenizer.json`.
/// `SCHOLIA_SPM_REFERENCE=DIR` checks another pair of files (`unigram_fixture.py --all`).
#[test]
fn ids_are_the_references() {
    let dir = std::env::var("SCHOLIA_SPM_REFERENCE").ok();
    let read = |name: &str| match &dir {
        Some(d) => std::fs::read_to_string(format!("{d}/{name}")).unwrap(),
        None => std::fs::read_to_string(format!("{}/testdata/spm/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap(),
    };
    let json = read("tokenizer.json");
    let (current, older) = (load(&json), older(&json));
    let (mut texts, mut differ) = (0, 0);
    for line in read("ids.jsonl").lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let text = case["text"].as_str().unwrap();
        let ids = |k: &str| -> Vec<u32> {
            case[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_u64().unwrap() as u32)
                .collect()
        };
        let want = ids("ids");
        assert_eq!(current.encode(text, usize::MAX), want, "{text:?}");
        assert_eq!(current.count(text), want.len() - 2, "{text:?}");
        // Cut to what a model reads: the reference's first ids, then `</s>`.
        for max_len in [8, 128] {
            let mut cut = want[..want.len().min(max_len) - 1].to_vec();
            cut.push(2);
            assert_eq!(current.encode(text, max_len), cut, "{max_len}: {text:?}");
        }
        let want_older = if case.get("older").is_some() {
            ids("older")
        } else {
            want
        };
        differ += usize::from(case.get("older").is_some());
        assert_eq!(older.encode(text, usize::MAX), want_older, "older form: {text:?}");
        texts += 1;
    }
    assert!(
        texts > 90 && differ > 10,
        "{texts} texts, {differ} differ between the forms"
    );
}

#[test]
fn long_texts_are_cut_inside_the_frame() {
    let json = std::fs::read_to_string(format!("{}/testdata/spm/tokenizer.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let t = load(&json);
    let long = "words and more words ".repeat(200);
    let ids = t.encode(&long, 16);
    assert_eq!(ids.len(), 16);
    assert_eq!((ids[0], ids[15]), (0, 2));
    assert_eq!(ids[1..15], t.encode(&long, usize::MAX)[1..15]);
    assert_eq!(t.encode("", 16), [0, 2]);
}

#[test]
fn what_is_not_supported_is_named() {
    let base = serde_json::json!({"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]]}});
    let with = |k: &str, v: Value| {
        let mut b = base.clone();
        b[k] = v;
        SentencePiece::from_json(&b).unwrap_err()
    };
    assert!(with("normalizer", serde_json::json!({"type": "BertNormalizer"})).contains("`BertNormalizer` normalizer"));
    assert!(with("pre_tokenizer", serde_json::json!({"type": "ByteLevel"})).contains("`ByteLevel` pre-tokenizer"));
    assert!(with("post_processor", serde_json::json!({"type": "Weird"})).contains("`Weird` post-processor"));
    let bad_regex = serde_json::json!({"type": "Replace", "pattern": {"Regex": "(?<=a)b"}, "content": ""});
    assert!(with("normalizer", bad_regex).contains("Replace pattern"));
}

/// A text far longer than the model reads costs what its first pieces cost: one unbroken
/// megabyte (a pasted blob) gives the same first ids as its first kilobytes, at once.
#[test]
fn a_huge_text_is_read_only_as_far_as_the_model_reads() {
    let json = std::fs::read_to_string(format!("{}/testdata/spm/tokenizer.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let t = load(&json);
    for unit in ["x", "ab", "日本語", "word ", "<s>"] {
        let huge = unit.repeat((1 << 20) / unit.len());
        let started = std::time::Instant::now();
        let ids = t.encode(&huge, 128);
        let took = started.elapsed();
        let short: String = huge.chars().take(8192).collect();
        assert_eq!(ids, t.encode(&short, 128), "{unit}");
        assert!(took < std::time::Duration::from_secs(1), "{unit}: {took:?}");
    }
}
