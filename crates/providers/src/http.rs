//! HTTP details every remote client shares: `Retry-After` that cannot panic, response bodies
//! read with a cap, base URLs shown without their credentials.

use std::time::{Duration, Instant, SystemTime};

/// The longest wait a `Retry-After` may ask for; longer ones are cut to it.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

/// A `Retry-After` value: seconds (integer or decimal; NaN, infinite or negative values are
/// ignored, huge ones capped) or an HTTP date.
pub fn retry_after(value: &str) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<f64>() {
        if !secs.is_finite() || secs < 0.0 {
            return None;
        }
        return Some(Duration::from_secs_f64(secs.min(MAX_RETRY_AFTER.as_secs_f64())));
    }
    let when = http_date(v)?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or_default()
            .min(MAX_RETRY_AFTER),
    )
}

/// The `Retry-After` of a response, if it has a usable one.
pub fn retry_after_header(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    retry_after(headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?)
}

/// Whether waiting `wait` from now would reach `deadline` (an overflowing instant does).
pub fn past_deadline(wait: Duration, deadline: Instant) -> bool {
    Instant::now().checked_add(wait).is_none_or(|t| t >= deadline)
}

/// Why a request failed, as a person reads it: reqwest's words and the cause under them
/// (`error sending request: Connection refused (os error 111)`, not only the first half).
pub fn reason(e: reqwest::Error) -> String {
    let e = e.without_url();
    let top = e.to_string();
    let mut cause: Option<&dyn std::error::Error> = std::error::Error::source(&e);
    let mut last = None;
    while let Some(c) = cause {
        last = Some(c.to_string());
        cause = c.source();
    }
    match last {
        Some(l) if !top.contains(&l) => format!("{top}: {l}"),
        _ => top,
    }
}

/// Returns once `stop` says so, asking every `poll`: raced against a request (`select!`), it
/// ends the wait at once when a command is stopped (Ctrl-C, a server shutting down).
pub async fn stopped(stop: &dyn Fn() -> bool, poll: Duration) {
    while !stop() {
        tokio::time::sleep(poll).await;
    }
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn http_date(v: &str) -> Option<SystemTime> {
    let format = time::macros::format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    let dt = time::PrimitiveDateTime::parse(v, &format).ok()?.assume_utc();
    Some(std::time::UNIX_EPOCH + Duration::from_secs(dt.unix_timestamp().max(0) as u64))
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BodyError {
    #[error("the response is larger than {0} bytes")]
    TooLarge(usize),
    #[error("reading the response: {0}")]
    Read(String),
}

/// Reads a whole response body, refusing one longer than `cap` bytes.
pub async fn read_body(mut response: reqwest::Response, cap: usize) -> Result<Vec<u8>, BodyError> {
    if response.content_length().is_some_and(|n| n > cap as u64) {
        return Err(BodyError::TooLarge(cap));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| BodyError::Read(e.without_url().to_string()))?
    {
        if bytes.len() + chunk.len() > cap {
            return Err(BodyError::TooLarge(cap));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// Like [`read_body`], as text (invalid UTF-8 replaced).
pub async fn read_text(response: reqwest::Response, cap: usize) -> Result<String, BodyError> {
    let bytes = read_body(response, cap).await?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// `url` without `user:password@`, for logs and messages.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string().trim_end_matches('/').to_string()
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_values() {
        let check = |v: &str, expected: Option<Duration>| assert_eq!(retry_after(v), expected, "{v:?}");
        check("2", Some(Duration::from_secs(2)));
        check(" 0.5 ", Some(Duration::from_millis(500)));
        check("Sun, 06 Nov 1994 08:49:37 GMT", Some(Duration::ZERO));
        check("soon", None);
        check("NaN", None);
        check("inf", None);
        check("-5", None);
        check("1e309", None);
        check("18446744073709551615", Some(MAX_RETRY_AFTER));
        check("1e300", Some(MAX_RETRY_AFTER));
        check("Fri, 31 Dec 9999 23:59:59 GMT", Some(MAX_RETRY_AFTER));
        assert!(past_deadline(Duration::MAX, Instant::now() + Duration::from_secs(60)));
        assert!(!past_deadline(Duration::ZERO, Instant::now() + Duration::from_secs(60)));
    }

    #[test]
    fn credentials_never_show() {
        assert_eq!(redact("https://user:secret@llm.example/v1"), "https://llm.example/v1");
        assert_eq!(redact("https://llm.example/v1"), "https://llm.example/v1");
        assert_eq!(redact("not a url"), "not a url");
    }
}
