//! A model named on a hub (issue 39: "users may name a model to fetch on first use into the
//! cache directory"), fetched from the fake hub in Hugging Face's wire format: once, whole or
//! not at all, never while someone waits on a search, and then by meaning on every surface.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use scholia::embed::EmbedError;
use scholia::providers::hub::{self, HubModel};
use scholia_fakes::FakeServer;
use serde_json::json;

use crate::mcp::call;
use crate::support::{TestVault, env, fakes, stderr, stdout};

const NAME: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// A directory shaped like a model (small files, and 2 MiB of weights the hub serves as a
/// large file) that is not one this reader loads.
fn not_a_model() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (file, text) in [
        ("config.json", "{}"),
        ("tokenizer.json", "{}"),
        ("1_Pooling/config.json", r#"{"pooling_mode_mean_tokens": true}"#),
    ] {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let weights: Vec<u8> = (0..2 << 20).map(|_| fastrand::u8(..)).collect();
    std::fs::write(dir.path().join("model.safetensors"), weights).unwrap();
    dir
}

/// What the cache's models directory holds.
fn models_in(cache: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cache.join("models")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

async fn fetch(
    server: &FakeServer,
    cache: &Path,
    name: &str,
    stop_after: Option<Duration>,
) -> Result<PathBuf, EmbedError> {
    let model = HubModel::parse(name, &format!("{}/hub", server.base())).unwrap();
    let cache = cache.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let stop = || stop_after.is_some_and(|after| started.elapsed() >= after);
        hub::fetch(&model, &cache, &stop, &mut |_| {})
    })
    .await
    .unwrap()
}

/// Every way a fetch can fail leaves the models directory as it was: no model, no partial
/// files; and it says why, naming the file.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_fetch_leaves_nothing_and_says_why() {
    let server = fakes().await;
    let weights = not_a_model();
    for repo in ["o/m", "o/m-corrupt", "o/m-truncated", "o/m-slow"] {
        server.host_model(repo, weights.path().to_path_buf());
    }
    let partial = not_a_model();
    std::fs::remove_file(partial.path().join("tokenizer.json")).unwrap();
    server.host_model("o/partial", partial.path().to_path_buf());

    for (name, why) in [
        ("o/m-corrupt", "model.safetensors: its SHA-256 is"),
        ("o/m-truncated", "model.safetensors: reading it"),
        ("o/m", "not a model this reader loads"),
        ("o/nobody", "config.json: HTTP 401: no model o/nobody"),
        ("o/m@v9", "config.json: HTTP 404: no revision `v9`"),
        ("o/partial", "tokenizer.json: HTTP 404: not in the model"),
    ] {
        let cache = tempfile::tempdir().unwrap();
        let e = fetch(&server, cache.path(), name, None).await.unwrap_err();
        assert!(e.to_string().contains(why), "{name}: {e}");
        assert_eq!(models_in(cache.path()), Vec::<String>::new(), "{name}");
    }
    // Stopped while the weights arrive (Ctrl-C, a server ending): at once, nothing left.
    let cache = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let e = fetch(&server, cache.path(), "o/m-slow", Some(Duration::from_millis(500)))
        .await
        .unwrap_err();
    assert!(matches!(e, EmbedError::Stopped(_)), "{e}");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert_eq!(models_in(cache.path()), Vec::<String>::new());
    // A file where the models directory goes: an error naming it, the file untouched.
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(cache.path().join("models"), "mine").unwrap();
    let e = fetch(&server, cache.path(), "o/m", None).await.unwrap_err();
    assert!(e.to_string().contains("models"), "{e}");
    assert_eq!(std::fs::read_to_string(cache.path().join("models")).unwrap(), "mine");
}

/// The settings name a model: a search before it is fetched answers by words at once with one
/// warning, fetching nothing; `scholia index` fetches it once, byte for byte, into the cache
/// directory; then a paraphrase finds its note, the MCP server finds by meaning, and nothing
/// is fetched again. Two processes fetching at once both get the one model.
#[tokio::test(flavor = "multi_thread")]
async fn a_named_model_is_fetched_once_and_answers_by_meaning() {
    let Some(model) = crate::support::embed_model() else {
        return;
    };
    let server = fakes().await;
    server.host_model(NAME, model.clone());
    let e = env(&[
        ("SCHOLIA_EMBED_HUB_MODEL", NAME),
        ("SCHOLIA_EMBED_HUB_URL", &format!("{}/hub", server.base())),
    ]);
    let v = TestVault::example();
    let question = ["search", "how hot should the room be", "--limit", "1"];

    let out = v.cli(&e, &question).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("not fetched yet"), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    // Research does not wait for the download either: it relates notes by words.
    let out = v.cli(&e, &["research", "Kombucha.md"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(v.read("Kombucha.md").contains("## Research"));
    assert_eq!(server.count_prefixed("/hub"), 0);

    let out = v.cli(&e, &["index"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("vectors: 7 notes embedded"), "{}", stdout(&out));
    let fetched = v.env(&Vec::new())["SCHOLIA_CACHE_DIR"].clone();
    let dir = Path::new(&fetched).join("models/sentence-transformers--all-MiniLM-L6-v2--main");
    for file in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "1_Pooling/config.json",
        "modules.json",
    ] {
        assert_eq!(
            std::fs::read(dir.join(file)).unwrap(),
            std::fs::read(model.join(file)).unwrap(),
            "{file}"
        );
    }
    assert_eq!(
        models_in(Path::new(&fetched)),
        ["sentence-transformers--all-MiniLM-L6-v2--main"]
    );
    let asked = server.count_prefixed("/hub");

    let out = v.cli(&e, &[&question[..], &["--mode", "semantic"]].concat()).await;
    assert!(
        stdout(&out).starts_with("Fermentation temperature.md"),
        "{}",
        stdout(&out)
    );
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let out = v.cli(&e, &["index"]).await;
    assert!(stdout(&out).contains("vectors: 0 notes embedded"), "{}", stdout(&out));

    assert_eq!(server.count_prefixed("/hub"), asked, "fetched again");

    // An agent's server on a vault whose cache has no model: it answers at once by words while
    // it fetches the model in the background, then by meaning. The editor's server on that
    // vault finds the model there.
    let v = TestVault::example();
    let (c, _stop) = crate::mcp::connect(&v, &e).await;
    let ask = async || {
        let r = call(
            &c,
            "find_notes",
            json!({"query": "how hot should the room be", "mode": "semantic", "limit": 1}),
        )
        .await;
        r.structured_content.clone().unwrap()
    };
    let started = Instant::now();
    let first = ask().await;
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert_ne!(first["mode"], "semantic", "{first}");
    let found = loop {
        let s = ask().await;
        if s["mode"] == "semantic" || started.elapsed() > Duration::from_secs(60) {
            break s;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(found["results"][0]["path"], "Fermentation temperature.md", "{found}");
    assert_eq!(server.count_prefixed("/hub-lfs"), 2, "one more fetch of the weights");
    let mut lsp = v.lsp_ready(&e).await;
    let started = Instant::now();
    let found = loop {
        let r = lsp
            .request(
                "workspace/executeCommand",
                json!({"command": "scholia.search", "arguments": [{"query": "how hot should the room be", "mode": "semantic"}]}),
            )
            .await;
        if r["mode"] == "semantic" || started.elapsed() > Duration::from_secs(30) {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(found["hits"][0]["path"], "Fermentation temperature.md", "{found}");
    assert_eq!(
        server.count_prefixed("/hub-lfs"),
        2,
        "the editor's server fetched nothing"
    );
    // Its status (`:checkhealth scholia`) says where the vectors come from.
    let status = lsp
        .request(
            "workspace/executeCommand",
            json!({"command": "scholia.status", "arguments": []}),
        )
        .await;
    let meaning = &status["providers"]["embeddings"];
    assert_eq!(meaning["source"], "hub", "{status}");
    assert_eq!(meaning["fetched"], true, "{status}");
    assert!(meaning["model"].as_str().unwrap().contains(NAME), "{status}");
    assert_eq!(status["vault"]["vectors"], 7, "{status}");
    lsp.shutdown().await;

    // Two fetches at once into an empty cache: both end with the one whole model.
    let cache = tempfile::tempdir().unwrap();
    let (a, b) = tokio::join!(
        fetch(&server, cache.path(), NAME, None),
        fetch(&server, cache.path(), NAME, None)
    );
    assert_eq!(a.unwrap(), b.unwrap());
    assert_eq!(
        models_in(cache.path()),
        ["sentence-transformers--all-MiniLM-L6-v2--main"]
    );
    // A revision pinned by its commit is a model of its own.
    let pinned = format!("{NAME}@{}", scholia_fakes::hub::COMMIT);
    let dir = fetch(&server, cache.path(), &pinned, None).await.unwrap();
    assert!(dir.ends_with(format!(
        "sentence-transformers--all-MiniLM-L6-v2--{}",
        scholia_fakes::hub::COMMIT
    )));
}

/// A multilingual model (XLM-RoBERTa with a SentencePiece tokenizer, as
/// paraphrase-multilingual-MiniLM-L12-v2 is; here a tiny one with random weights, the one the
/// embed crate checks against its NumPy reference) named on the hub: fetched by `scholia
/// index` with the prompts it declares, it embeds notes in six scripts, and a search by meaning
/// answers with no warning.
#[tokio::test(flavor = "multi_thread")]
async fn a_multilingual_sentencepiece_model_is_fetched_and_embeds_every_script() {
    let data = crate::support::repo().join("crates/embed/testdata");
    let model = tempfile::tempdir().unwrap();
    std::fs::create_dir(model.path().join("1_Pooling")).unwrap();
    for f in [
        "config.json",
        "model.safetensors",
        "sentence_bert_config.json",
        "1_Pooling/config.json",
    ] {
        std::fs::copy(data.join("xlmr").join(f), model.path().join(f)).unwrap();
    }
    std::fs::copy(data.join("spm/tokenizer.json"), model.path().join("tokenizer.json")).unwrap();
    // E5's prompts, which the model reads before a question and before a note.
    let prompts = r#"{"prompts": {"query": "query: ", "passage": "passage: "}}"#;
    std::fs::write(model.path().join("config_sentence_transformers.json"), prompts).unwrap();
    let name = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2";
    let server = fakes().await;
    server.host_model(name, model.path().to_path_buf());
    let e = env(&[
        ("SCHOLIA_EMBED_HUB_MODEL", name),
        ("SCHOLIA_EMBED_HUB_URL", &format!("{}/hub", server.base())),
    ]);
    let v = crate::support::TestVault::with_files(&[
        ("Sauerteig.md", "# Sauerteig\n\nDer Starter braucht Wärme und Mehl.\n"),
        ("発酵.md", "# 発酵\n\n温度が高いと発酵が速くなります。\n"),
        ("Закваска.md", "# Закваска\n\nЗакваске нужно тепло и мука.\n"),
        ("تخمير.md", "# تخمير\n\nيحتاج العجين إلى الدفء.\n"),
        ("Lên men.md", "# Lên men\n\nNhiệt độ cao làm men nở nhanh hơn.\n"),
        ("Starter.md", "# Starter\n\nThe <s>old</s> starter needs warmth.\n"),
    ]);
    let out = v.cli(&e, &["index"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("vectors: 6 notes embedded"), "{}", stdout(&out));
    let cache = v.env(&Vec::new())["SCHOLIA_CACHE_DIR"].clone();
    let fetched = Path::new(&cache).join("models/sentence-transformers--paraphrase-multilingual-MiniLM-L12-v2--main");
    assert_eq!(
        std::fs::read_to_string(fetched.join("config_sentence_transformers.json")).unwrap(),
        prompts
    );
    let out = v
        .cli(
            &e,
            &["search", "Wärme für den Teig", "--mode", "semantic", "--limit", "6"],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).lines().filter(|l| l.contains(".md")).count(),
        6,
        "{}",
        stdout(&out)
    );
}

/// A name that is not `owner/name[@revision]` is an error naming the setting and the form, and
/// an untrusted vault cannot name one (nor the hub).
#[tokio::test(flavor = "multi_thread")]
async fn a_bad_name_is_refused_and_a_vault_cannot_choose_one() {
    let v = TestVault::example();
    for bad in ["../x", "all-MiniLM-L6-v2", "o/n@-rf"] {
        let out = v.cli(&env(&[("SCHOLIA_EMBED_HUB_MODEL", bad)]), &["search", "x"]).await;
        assert!(!out.status.success(), "{bad}");
        let err = stderr(&out);
        assert!(
            err.contains("SCHOLIA_EMBED_HUB_MODEL") && err.contains("owner/name"),
            "{err}"
        );
    }
    let out = v
        .cli(
            &env(&[("SCHOLIA_EMBED_HUB_MODEL", NAME), ("SCHOLIA_EMBED_HUB_URL", "ftp://x")]),
            &["search", "x"],
        )
        .await;
    assert!(stderr(&out).contains("SCHOLIA_EMBED_HUB_URL"), "{}", stderr(&out));
    std::fs::write(
        v.path(".scholia.toml"),
        "[embeddings]\nhub_model = \"evil/model\"\nhub_url = \"http://127.0.0.1:9/hub\"\ndocument_prompt = \"again: \"\n",
    )
    .unwrap();
    let out = v.cli(&Vec::new(), &["search", "kombucha"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("embeddings.hub_model")
            && err.contains("embeddings.hub_url")
            && err.contains("embeddings.document_prompt"),
        "{err}"
    );
    assert!(!err.contains("not fetched"), "{err}");
}
