//! Finding the program, its version, and reading its `-o json` output.

use super::*;

pub(super) fn find_program(program: &str, path: Option<&str>) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 {
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::split_paths(path?)
        .map(|d| d.join(program))
        .find(|c| c.is_file())
}

pub(super) async fn read_capped(r: &mut (impl AsyncReadExt + Unpin), limit: usize) -> Result<Vec<u8>, CliError> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = r.read(&mut buf).await.map_err(|e| CliError::Io {
            program: "gemini".into(),
            message: format!("reading its output: {e}"),
        })?;
        if n == 0 {
            return Ok(out);
        }
        if out.len() + n > limit {
            return Err(CliError::OutputTooLarge { limit });
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// Drains a pipe, keeping its last `keep` bytes.
pub(super) async fn read_tail(mut r: impl AsyncReadExt + Unpin, keep: usize) -> String {
    let mut tail: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = r.read(&mut buf).await {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > keep * 2 {
            tail.drain(..tail.len() - keep);
        }
    }
    if tail.len() > keep {
        tail.drain(..tail.len() - keep);
    }
    String::from_utf8_lossy(&tail).into_owned()
}

pub(super) fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| {
            let mut parts = w.split('.').map(|p| p.parse::<u64>().ok());
            Some((parts.next()??, parts.next()??, parts.next().flatten().unwrap_or(0)))
        })
        .next()
}

/// `-o json` output: `{response, stats: {models: {<name>: {tokens: {…}}}}, error}`, possibly
/// after lines of noise.
pub fn parse_json_output(stdout: &str) -> Result<CliOutput, CliError> {
    let value: Option<Value> = serde_json::from_str(stdout.trim()).ok().or_else(|| {
        let start = stdout.find("\n{").map(|i| i + 1).or_else(|| stdout.find('{'))?;
        serde_json::Deserializer::from_str(&stdout[start..])
            .into_iter::<Value>()
            .next()?
            .ok()
    });
    let Some(value) = value.filter(|v| v.is_object()) else {
        // Not the CLI's envelope: treat it as the answer itself.
        return Ok(CliOutput {
            response: stdout.to_string(),
            ..Default::default()
        });
    };
    if let Some(err) = value.get("error").filter(|e| !e.is_null()) {
        let message = err
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| err.to_string());
        return Err(CliError::Reported(message));
    }
    let response = value
        .get("response")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut tokens = Tokens::default();
    let mut models: Vec<(String, u64)> = Vec::new();
    if let Some(map) = value.pointer("/stats/models").and_then(Value::as_object) {
        for (name, stats) in map {
            let t = stats.get("tokens");
            let get = |k: &str| t.and_then(|t| t.get(k)).and_then(Value::as_u64).unwrap_or(0);
            let m = Tokens {
                prompt: get("prompt"),
                candidates: get("candidates"),
                cached: get("cached"),
                thoughts: get("thoughts"),
                tool: get("tool"),
                total: get("total"),
            };
            tokens.add(&m);
            models.push((name.clone(), m.total));
        }
    }
    models.sort_by_key(|m| std::cmp::Reverse(m.1));
    Ok(CliOutput {
        response,
        models: models.into_iter().map(|(n, _)| n).collect(),
        tokens,
    })
}
