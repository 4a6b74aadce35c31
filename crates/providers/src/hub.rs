//! A sentence-transformers model named on a Hugging Face-style hub, fetched on first use into
//! the cache directory: `GET {hub}/{owner}/{name}/resolve/{revision}/{file}`, the hub's wire
//! format. A large file answers with a redirect to its store whose `X-Linked-Etag` is the
//! file's SHA-256 and `X-Linked-Size` its length; both are checked. The files go into a
//! directory of their own beside the model's and become the model's by one rename once all
//! are whole and the model loads, so a directory under the model's name is always a whole
//! model: an interrupted or failed fetch leaves nothing another process could load, and two
//! processes fetching at once both end with the one that renamed first.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use scholia_embed::EmbedError;
use sha2::{Digest, Sha256};

/// Where a name is fetched from when the settings do not say.
pub const DEFAULT_HUB: &str = "https://huggingface.co";
/// What a model directory must hold (what [`scholia_embed::local::LocalModel::load`] reads).
const REQUIRED: [&str; 4] = [
    "config.json",
    "tokenizer.json",
    "model.safetensors",
    "1_Pooling/config.json",
];
/// What it reads when present (how many tokens a text is read to, the prompts put before a
/// question and a note; `modules.json`, kept with the model as it was published).
const OPTIONAL: [&str; 3] = [
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
];
/// The largest file taken (a BERT-large's weights are 1.3 GB).
const MAX_FILE: u64 = 4 << 30;
const MAX_REDIRECTS: usize = 5;
/// How long a download may go without a byte before it is given up.
const STALLED: Duration = Duration::from_secs(60);
/// How often a download in progress asks whether it should stop.
const STOP_POLL: Duration = Duration::from_millis(100);
/// A fetch directory this old was left by a process that ended before it finished.
const ABANDONED: Duration = Duration::from_secs(24 * 3600);

/// A model on a hub: `owner/name`, a revision (a branch, tag or commit), the hub's base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubModel {
    pub repo: String,
    pub revision: String,
    pub hub: String,
}

/// The form a model's name takes, for errors.
pub const NAME_FORM: &str =
    "a hub model as owner/name or owner/name@revision, e.g. sentence-transformers/all-MiniLM-L6-v2";

impl HubModel {
    /// `owner/name` or `owner/name@revision` (letters, digits, `-`, `_`, `.`; no part starting
    /// with `.` or `-`, nor holding `..` or `--`, as the hub has them: `--` joins the parts of
    /// its directory's name, which must be one model's); `hub` a base URL. `Err` names the form.
    pub fn parse(name: &str, hub: &str) -> Result<HubModel, String> {
        let (repo, revision) = name.trim().split_once('@').unwrap_or((name.trim(), "main"));
        let part_ok = |p: &str| {
            !p.is_empty()
                && p.len() <= 96
                && !p.starts_with(['.', '-'])
                && !p.contains("..")
                && !p.contains("--")
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        let parts: Vec<&str> = repo.split('/').collect();
        if parts.len() != 2 || !parts.iter().all(|p| part_ok(p)) || !part_ok(revision) {
            return Err(NAME_FORM.into());
        }
        Ok(HubModel {
            repo: repo.to_string(),
            revision: revision.to_string(),
            hub: hub.trim_end_matches('/').to_string(),
        })
    }

    /// Its directory under the cache directory `cache`.
    pub fn dir(&self, cache: &Path) -> PathBuf {
        cache.join("models").join(self.key())
    }

    /// Whether its directory holds a model (it can only hold a whole one).
    pub fn is_fetched(&self, cache: &Path) -> bool {
        let dir = self.dir(cache);
        REQUIRED.iter().all(|f| dir.join(f).is_file())
    }

    /// As messages show it (the hub without credentials).
    pub fn describe(&self) -> String {
        format!(
            "{}@{} from {}",
            self.repo,
            self.revision,
            crate::http::redact(&self.hub)
        )
    }

    fn key(&self) -> String {
        format!("{}--{}", self.repo.replace('/', "--"), self.revision)
    }

    fn url(&self, file: &str) -> String {
        format!("{}/{}/resolve/{}/{file}", self.hub, self.repo, self.revision)
    }
}

/// Fetches `model` into `cache` unless it is there, and gives its directory. `stop` ends the
/// fetch at once ([`EmbedError::Stopped`]), `progress` hears the bytes received so far.
/// Blocking (call off the async runtime).
pub fn fetch(
    model: &HubModel,
    cache: &Path,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(u64),
) -> Result<PathBuf, EmbedError> {
    let dir = model.dir(cache);
    if model.is_fetched(cache) {
        return Ok(dir);
    }
    let fail = |m: String| EmbedError::Model {
        path: model.describe(),
        message: m,
    };
    let models = cache.join("models");
    std::fs::create_dir_all(&models).map_err(|e| fail(format!("creating {}: {e}", models.display())))?;
    clear_abandoned(&models, &model.key());
    let partial = Partial(models.join(format!(
        ".fetching-{}-{}-{}",
        model.key(),
        std::process::id(),
        fastrand::u32(..)
    )));
    std::fs::create_dir(&partial.0).map_err(|e| fail(format!("creating {}: {e}", partial.0.display())))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(format!("could not start its runtime: {e}")))?;
    let http = {
        let _guard = rt.enter();
        reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .read_timeout(STALLED)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| fail(e.to_string()))?
    };
    let mut received = 0u64;
    for (file, required) in REQUIRED
        .iter()
        .map(|f| (f, true))
        .chain(OPTIONAL.iter().map(|f| (f, false)))
    {
        let to = partial.0.join(file);
        let got = rt.block_on(async {
            tokio::select! {
                got = download(&http, model, file, &to, &mut received, progress) => got,
                () = crate::http::stopped(stop, STOP_POLL) => Err(Failure::Stopped),
            }
        });
        match got {
            Ok(()) => {}
            Err(Failure::Missing(_)) if !required => {}
            Err(Failure::Missing(why)) if *file == REQUIRED[0] => {
                return Err(fail(format!(
                    "{file}: {why}; is `{}` a sentence-transformers model on this hub?",
                    model.repo
                )));
            }
            Err(Failure::Stopped) => {
                return Err(EmbedError::Stopped(format!(
                    "while fetching {} ({received} bytes received)",
                    model.describe()
                )));
            }
            Err(Failure::Missing(why) | Failure::Other(why)) => return Err(fail(format!("{file}: {why}"))),
        }
    }
    // Only a model that loads is put where it is looked for.
    scholia_embed::local::LocalModel::load(&partial.0)
        .map_err(|e| fail(format!("what the hub gave is not a model this reader loads: {e}")))?;
    sync_dir(&partial.0);
    match std::fs::rename(&partial.0, &dir) {
        Ok(()) => {
            sync_dir(&models);
            Ok(dir)
        }
        // Another process put it there first: its copy is as good.
        Err(_) if model.is_fetched(cache) => Ok(dir),
        Err(e) => Err(fail(format!("moving it into {}: {e}", dir.display()))),
    }
}

enum Failure {
    /// The hub has no such file (or model, or revision): optional files may be missing.
    Missing(String),
    Other(String),
    Stopped,
}

/// A fetch directory, removed with what it holds unless it was renamed into place.
struct Partial(PathBuf);

impl Drop for Partial {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `file` of `model` into `to`, following the hub's redirects and checking what the first
/// answer says of the file (its length, and its SHA-256 for a large one).
async fn download(
    http: &reqwest::Client,
    model: &HubModel,
    file: &str,
    to: &Path,
    received: &mut u64,
    progress: &mut dyn FnMut(u64),
) -> Result<(), Failure> {
    let mut url = model.url(file);
    let (mut sha, mut size) = (None, None);
    let mut response = None;
    for _ in 0..=MAX_REDIRECTS {
        let r = http
            .get(&url)
            .send()
            .await
            .map_err(|e| Failure::Other(format!("{}: {}", crate::http::redact(&url), crate::http::reason(e))))?;
        let header = |name: &str| r.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
        sha = sha.or_else(|| header("x-linked-etag").map(|e| e.trim_matches('"').to_ascii_lowercase()));
        size = size.or_else(|| header("x-linked-size").and_then(|s| s.parse::<u64>().ok()));
        if r.status().is_redirection() {
            let next = header("location").ok_or_else(|| Failure::Other("a redirect without a Location".into()))?;
            url = url::Url::parse(&url)
                .and_then(|base| base.join(&next))
                .map_err(|e| Failure::Other(format!("a redirect to `{next}`: {e}")))?
                .to_string();
            continue;
        }
        response = Some(r);
        break;
    }
    let Some(mut r) = response else {
        return Err(Failure::Other(format!("more than {MAX_REDIRECTS} redirects")));
    };
    let status = r.status().as_u16();
    if !r.status().is_success() {
        let code = r
            .headers()
            .get("x-error-code")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let why = match (status, code.as_str()) {
            (_, "RevisionNotFound") => format!("HTTP {status}: no revision `{}`", model.revision),
            (_, "RepoNotFound") | (401, _) => {
                format!("HTTP {status}: no model {} on this hub (or a private one)", model.repo)
            }
            (_, "GatedRepo") | (403, _) => {
                format!("HTTP {status}: the model is gated; fetch it yourself and set its directory")
            }
            (404, _) | (_, "EntryNotFound") => {
                return Err(Failure::Missing(format!("HTTP {status}: not in the model")));
            }
            _ => format!("HTTP {status}"),
        };
        return Err(Failure::Other(why));
    }
    let size = size.or(r.content_length());
    if size.is_some_and(|n| n > MAX_FILE) {
        return Err(Failure::Other(format!("larger than {MAX_FILE} bytes")));
    }
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Failure::Other(format!("{}: {e}", parent.display())))?;
    }
    let written = |e: std::io::Error| Failure::Other(format!("writing {}: {e}", to.display()));
    let mut out = std::fs::File::create(to).map_err(written)?;
    let mut hash = Sha256::new();
    let mut length = 0u64;
    while let Some(chunk) = r
        .chunk()
        .await
        .map_err(|e| Failure::Other(format!("reading it: {}", crate::http::reason(e))))?
    {
        length += chunk.len() as u64;
        if length > MAX_FILE {
            return Err(Failure::Other(format!("larger than {MAX_FILE} bytes")));
        }
        hash.update(&chunk);
        out.write_all(&chunk).map_err(written)?;
        *received += chunk.len() as u64;
        progress(*received);
    }
    out.sync_all().map_err(written)?;
    if let Some(want) = size.filter(|n| *n != length) {
        return Err(Failure::Other(format!("{length} bytes received of {want}")));
    }
    let got = scholia_base::hex(&hash.finalize());
    match sha {
        Some(want) if is_sha256(&want) && want != got => {
            Err(Failure::Other(format!("its SHA-256 is {got}, the hub said {want}")))
        }
        _ => Ok(()),
    }
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Removes fetch directories of this model that a process left a day ago or more (it was
/// killed): what they hold is never read.
fn clear_abandoned(models: &Path, key: &str) {
    let prefix = format!(".fetching-{key}-");
    let Ok(entries) = std::fs::read_dir(models) else { return };
    for e in entries.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age >= ABANDONED);
        if old && e.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Makes a directory's entries durable (best effort: not every filesystem can).
fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_owner_slash_name_at_an_optional_revision() {
        let m = HubModel::parse("sentence-transformers/all-MiniLM-L6-v2", "https://huggingface.co/").unwrap();
        assert_eq!(
            (m.repo.as_str(), m.revision.as_str(), m.hub.as_str()),
            (
                "sentence-transformers/all-MiniLM-L6-v2",
                "main",
                "https://huggingface.co"
            )
        );
        assert_eq!(
            m.url("1_Pooling/config.json"),
            "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/1_Pooling/config.json"
        );
        assert_eq!(
            m.dir(Path::new("/c")),
            Path::new("/c/models/sentence-transformers--all-MiniLM-L6-v2--main")
        );
        let pinned = HubModel::parse("o/n@c9745ed1d9f207416be6d2e6f8de32d1f16199bf", DEFAULT_HUB).unwrap();
        assert_eq!(pinned.revision, "c9745ed1d9f207416be6d2e6f8de32d1f16199bf");
        // Nothing that could leave the models directory or pass for an option.
        for bad in [
            "", "name", "o/n/x", "../n", "o/..", "o/.n", "-o/n", "o/n@", "o/n@../x", "o/n m", "o\\n", "o/n@-x", "/n",
            "a--b/c", "a/b--c",
        ] {
            assert_eq!(HubModel::parse(bad, DEFAULT_HUB), Err(NAME_FORM.to_string()), "{bad}");
        }
    }

    #[test]
    fn abandoned_fetches_of_the_model_are_cleared() {
        let models = tempfile::tempdir().unwrap();
        let old = models.path().join(".fetching-o--n--main-1-2");
        let other = models.path().join(".fetching-o--m--main-1-2");
        let fresh = models.path().join(".fetching-o--n--main-3-4");
        for d in [&old, &other, &fresh] {
            std::fs::create_dir(d).unwrap();
        }
        let day_ago = SystemTime::now() - ABANDONED - Duration::from_secs(60);
        for d in [&old, &other] {
            std::fs::File::open(d).unwrap().set_modified(day_ago).unwrap();
        }
        clear_abandoned(models.path(), "o--n--main");
        assert!(!old.exists() && other.exists() && fresh.exists());
    }
}
