//! SSRF-safe page fetching: http(s) only; every address a host resolves to is checked (and
//! connections only ever go to checked addresses, so DNS rebinding cannot slip past); every
//! redirect is re-checked; bytes and time are capped.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::extract::{self, Extracted};

const MAX_REDIRECTS: usize = 10;
/// Raw bytes read from one page; what is beyond is ignored.
pub const MAX_PAGE_BYTES: usize = 4 * 1024 * 1024;
const USER_AGENT: &str = concat!("Mozilla/5.0 (compatible; scholia/", env!("CARGO_PKG_VERSION"), ")");

#[derive(Debug, Clone, thiserror::Error)]
pub enum FetchError {
    #[error("url `{0}`: not a valid URL")]
    InvalidUrl(String),
    #[error("url `{0}`: only http and https URLs are fetched")]
    Scheme(String),
    #[error("url `{url}`: refused, {host} is a {kind} address ({ip}); only public hosts are fetched")]
    Blocked {
        url: String,
        host: String,
        ip: IpAddr,
        kind: &'static str,
    },
    #[error("url `{url}`: cannot resolve {host}: {reason}")]
    Dns { url: String, host: String, reason: String },
    #[error("url `{0}`: more than 10 redirects")]
    TooManyRedirects(String),
    #[error("url `{0}`: timed out")]
    Timeout(String),
    #[error("url `{url}`: HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("url `{url}`: `{content_type}` is not a web page")]
    NotText { url: String, content_type: String },
    #[error("url `{url}`: {reason}")]
    Http { url: String, reason: String },
    #[error("url `{url}`: reading the page took longer than {secs} s; skipped")]
    TooSlow { url: String, secs: u64 },
}

/// Extracting one page may take this long (a hostile page must not hang a run).
const EXTRACT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long reading one page may take: 5 s, or `SCHOLIA_EXTRACT_TIMEOUT_MS` (tests).
fn extract_deadline() -> Duration {
    std::env::var("SCHOLIA_EXTRACT_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| (1..=600_000).contains(ms))
        .map_or(EXTRACT_TIMEOUT, Duration::from_millis)
}
/// Pages extracted at once, in this process.
static EXTRACTIONS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// Cloud metadata services: refused even when private hosts are allowed (tests).
const METADATA: &[IpAddr] = &[
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 2)),
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    IpAddr::V4(Ipv4Addr::new(192, 0, 0, 192)),
    IpAddr::V6(std::net::Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
];

/// Why an address is not public, if it is not.
pub fn blocked_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => blocked_v4(v4),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let v4_at = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
            // Forms that carry an IPv4 address: judged by that address.
            if let Some(v4) = v6.to_ipv4_mapped() {
                return blocked_v4(v4);
            }
            if s[..4] == [0, 0, 0, 0] && s[4] == 0xffff && s[5] == 0 {
                // IPv4-translated, ::ffff:0:a.b.c.d.
                return Some(blocked_v4(v4_at(s[6], s[7])).unwrap_or("IPv4-translated"));
            }
            if v6.is_loopback() {
                return Some("loopback");
            }
            if v6.is_unspecified() {
                return Some("unspecified");
            }
            if s[..6] == [0, 0, 0, 0, 0, 0] {
                // IPv4-compatible (deprecated), ::a.b.c.d.
                return Some(blocked_v4(v4_at(s[6], s[7])).unwrap_or("IPv4-compatible"));
            }
            if s[0] == 0x2002 {
                // 6to4 embeds an IPv4 address after the prefix.
                return blocked_v4(v4_at(s[1], s[2]));
            }
            if s[0] == 0x2001 && s[1] == 0 {
                // Teredo: the client's IPv4 address, inverted, in the last 32 bits.
                return Some(blocked_v4(v4_at(!s[6], !s[7])).unwrap_or("Teredo"));
            }
            if s[0] == 0x0064 && s[1] == 0xff9b {
                // NAT64 embeds an IPv4 address in the last 32 bits.
                return blocked_v4(v4_at(s[6], s[7]));
            }
            if v6.is_multicast() {
                Some("multicast")
            } else if s[0] & 0xffc0 == 0xfe80 {
                Some("link-local")
            } else if s[0] & 0xffc0 == 0xfec0 {
                Some("site-local")
            } else if s[0] & 0xfe00 == 0xfc00 {
                Some("private")
            } else if s[0] == 0x2001 && s[1] == 0x0db8 {
                Some("documentation")
            } else {
                None
            }
        }
    }
}

fn blocked_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if o[0] == 100 && (o[1] & 0xc0) == 64 {
        Some("CGNAT")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if ip.is_broadcast() || o[0] == 0 || o[0] >= 240 {
        Some("reserved")
    } else if ip.is_documentation() || (o[0] == 198 && (o[1] & 0xfe) == 18) || (o[0] == 192 && o[1] == 0 && o[2] == 0) {
        Some("special-purpose")
    } else {
        None
    }
}

/// Whether a fetch must refuse `ip`. `allow_private` (tests against loopback fakes) admits
/// loopback, private and CGNAT ranges, never link-local (cloud metadata) or the rest.
fn refused(ip: IpAddr, allow_private: bool) -> Option<&'static str> {
    let kind = blocked_kind(ip)?;
    if allow_private && matches!(kind, "loopback" | "private" | "CGNAT") {
        let mapped = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
            v4 => v4,
        };
        return METADATA.contains(&mapped).then_some("cloud metadata");
    }
    Some(kind)
}

/// Resolves through the system resolver and hands reqwest only the allowed addresses.
struct GuardedResolver {
    allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            match allowed_addrs(&host, allow_private).await {
                Ok(addrs) => Ok(Box::new(addrs.into_iter()) as Addrs),
                Err(e) => Err(Box::new(e) as Box<dyn std::error::Error + Send + Sync>),
            }
        })
    }
}

async fn allowed_addrs(host: &str, allow_private: bool) -> Result<Vec<SocketAddr>, FetchError> {
    let dns = |reason: String| FetchError::Dns {
        url: host.to_string(),
        host: host.to_string(),
        reason,
    };
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
        .await
        .map_err(|e| dns(e.to_string()))?
        .collect();
    if addrs.is_empty() {
        return Err(dns("no addresses".into()));
    }
    if let Some((ip, kind)) = addrs
        .iter()
        .find_map(|a| refused(a.ip(), allow_private).map(|k| (a.ip(), k)))
    {
        // One bad address taints the name: a public + private answer is a rebinding trick.
        return Err(FetchError::Blocked {
            url: host.to_string(),
            host: host.to_string(),
            ip,
            kind,
        });
    }
    Ok(addrs)
}

/// A fetched page: its final URL after redirects and its decoded text.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub url: String,
    pub content_type: String,
    pub body: String,
    pub truncated: bool,
}

impl scholia_base::Coded for FetchError {
    fn code(&self) -> &'static str {
        match self {
            FetchError::InvalidUrl(_) | FetchError::Scheme(_) => "INVALID_URL",
            FetchError::Blocked { .. } => "BLOCKED_ADDRESS",
            _ => "FETCH_FAILED",
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        match self {
            FetchError::InvalidUrl(_) | FetchError::Scheme(_) | FetchError::Blocked { .. } => {
                scholia_base::ErrorKind::InvalidInput
            }
            _ => scholia_base::ErrorKind::Upstream,
        }
    }
}

/// A page as research reads it.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Page {
    pub url: String,
    #[serde(flatten)]
    pub content: Extracted,
}

#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    allow_private: bool,
    max_bytes: usize,
}

impl Fetcher {
    /// `allow_private` (SCHOLIA_ALLOW_PRIVATE_HOSTS=1) exists for tests against loopback fakes.
    pub fn new(allow_private: bool) -> Fetcher {
        let client = reqwest::Client::builder()
            // A proxy would resolve and connect on our behalf, past the address check.
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(GuardedResolver { allow_private }))
            .user_agent(USER_AGENT)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .expect("HTTP client builds");
        Fetcher {
            client,
            allow_private,
            max_bytes: MAX_PAGE_BYTES,
        }
    }

    fn check(&self, url: &Url, shown: &str) -> Result<(), FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::Scheme(shown.to_string()));
        }
        let host = url.host().ok_or_else(|| FetchError::InvalidUrl(shown.to_string()))?;
        let literal = match host {
            url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
            url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
            url::Host::Domain(d) => d.parse::<IpAddr>().ok(),
        };
        if let Some(ip) = literal
            && let Some(kind) = refused(ip, self.allow_private)
        {
            return Err(FetchError::Blocked {
                url: shown.to_string(),
                host: ip.to_string(),
                ip,
                kind,
            });
        }
        Ok(())
    }

    /// GETs `url`, following up to 10 redirects (each re-checked), within `timeout` overall.
    pub async fn fetch(&self, url: &str, timeout: Duration) -> Result<Fetched, FetchError> {
        match tokio::time::timeout(timeout, self.fetch_inner(url)).await {
            Ok(r) => r,
            Err(_) => Err(FetchError::Timeout(url.to_string())),
        }
    }

    async fn fetch_inner(&self, url: &str) -> Result<Fetched, FetchError> {
        let mut current = Url::parse(url.trim()).map_err(|_| FetchError::InvalidUrl(url.to_string()))?;
        for _ in 0..=MAX_REDIRECTS {
            let shown = current.to_string();
            self.check(&current, &shown)?;
            if let Some(url::Host::Domain(d)) = current.host()
                && d.parse::<IpAddr>().is_err()
            {
                // Resolved here for a clear error; the resolver enforces it for the connection.
                allowed_addrs(d, self.allow_private)
                    .await
                    .map_err(|e| with_url(e, &shown))?;
            }
            let response = self
                .client
                .get(current.clone())
                .header(
                    reqwest::header::ACCEPT,
                    "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
                )
                .send()
                .await
                .map_err(|e| http_error(e, &shown))?;
            let status = response.status();
            if status.is_redirection() {
                let location = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| FetchError::Status {
                        url: shown.clone(),
                        status: status.as_u16(),
                    })?;
                current = current
                    .join(location)
                    .map_err(|_| FetchError::InvalidUrl(location.to_string()))?;
                continue;
            }
            if !status.is_success() {
                return Err(FetchError::Status {
                    url: shown,
                    status: status.as_u16(),
                });
            }
            let content_type = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("text/html")
                .to_string();
            let mime = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            if !matches!(
                mime.as_str(),
                "text/html" | "application/xhtml+xml" | "text/plain" | "text/markdown" | ""
            ) {
                return Err(FetchError::NotText {
                    url: shown,
                    content_type,
                });
            }
            let (bytes, truncated) = read_capped(response, self.max_bytes, &shown).await?;
            let body = decode(&bytes, &content_type);
            return Ok(Fetched {
                url: shown,
                content_type,
                body,
                truncated,
            });
        }
        Err(FetchError::TooManyRedirects(url.to_string()))
    }

    /// Fetches `url` and extracts its main content as Markdown (at most `max_chars`).
    pub async fn fetch_page(&self, url: &str, timeout: Duration, max_chars: usize) -> Result<Page, FetchError> {
        let fetched = self.fetch(url, timeout).await?;
        let final_url = fetched.url.clone();
        let content = if fetched.content_type.starts_with("text/plain")
            || fetched.content_type.starts_with("text/markdown")
        {
            let (markdown, truncated) = match fetched.body.char_indices().nth(max_chars) {
                Some((i, _)) => (fetched.body[..i].to_string(), true),
                None => (fetched.body, false),
            };
            Extracted {
                title: None,
                markdown,
                method: extract::Method::Html2text,
                truncated,
            }
        } else {
            let url_for_extract = final_url.clone();
            let deadline = extract_deadline();
            let permit = EXTRACTIONS.acquire().await.expect("never closed");
            if extract::worker::in_child() {
                // A child process the deadline kills: the work stops with the wait.
                let read =
                    extract::worker::extract_in_child(fetched.body, Some(url_for_extract), max_chars, deadline).await;
                drop(permit);
                match read {
                    Ok(extracted) => extracted,
                    Err(extract::worker::WorkerError::Deadline) => {
                        return Err(FetchError::TooSlow {
                            url: final_url.clone(),
                            secs: deadline.as_secs().max(1),
                        });
                    }
                    Err(e) => {
                        return Err(FetchError::Http {
                            url: final_url.clone(),
                            reason: format!("extraction failed: {e}"),
                        });
                    }
                }
            } else {
                // In process (the library alone): the page's shape is bounded before it is
                // parsed, so extraction ends; should one still outlive its deadline, it keeps
                // its permit, and at most EXTRACTIONS threads can be busy with pages nobody
                // waits for.
                let work = scholia_base::spawn_blocking(move || {
                    let _permit = permit;
                    extract::extract(&fetched.body, Some(&url_for_extract), max_chars)
                });
                match tokio::time::timeout(deadline, work).await {
                    Ok(extracted) => extracted,
                    Err(_) => {
                        return Err(FetchError::TooSlow {
                            url: final_url.clone(),
                            secs: deadline.as_secs().max(1),
                        });
                    }
                }
            }
        };
        Ok(Page {
            url: final_url,
            content,
        })
    }
}

fn with_url(e: FetchError, url: &str) -> FetchError {
    match e {
        FetchError::Blocked { host, ip, kind, .. } => FetchError::Blocked {
            url: url.to_string(),
            host,
            ip,
            kind,
        },
        FetchError::Dns { host, reason, .. } => FetchError::Dns {
            url: url.to_string(),
            host,
            reason,
        },
        other => other,
    }
}

fn http_error(e: reqwest::Error, url: &str) -> FetchError {
    // A refusal by the resolver arrives wrapped in the connect error.
    let mut source: Option<&dyn std::error::Error> = Some(&e);
    while let Some(s) = source {
        if let Some(f) = s.downcast_ref::<FetchError>() {
            return with_url(f.clone(), url);
        }
        source = s.source();
    }
    if e.is_timeout() {
        return FetchError::Timeout(url.to_string());
    }
    FetchError::Http {
        url: url.to_string(),
        reason: e.without_url().to_string(),
    }
}

async fn read_capped(mut response: reqwest::Response, cap: usize, url: &str) -> Result<(Vec<u8>, bool), FetchError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| http_error(e, url))? {
        let room = cap - bytes.len();
        if chunk.len() >= room {
            bytes.extend_from_slice(&chunk[..room]);
            return Ok((bytes, true));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((bytes, false))
}

/// Decodes with the charset of the Content-Type header, else of a `<meta>` tag, else UTF-8.
fn decode(bytes: &[u8], content_type: &str) -> String {
    let from_header = content_type
        .split(';')
        .filter_map(|p| p.trim().strip_prefix("charset="))
        .next()
        .map(|c| c.trim_matches('"').to_string());
    let from_meta = || {
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(2048)]).to_ascii_lowercase();
        let i = head.find("charset=")?;
        let rest = head[i + 8..].trim_start_matches(['"', '\'']);
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))?;
        Some(rest[..end].to_string())
    };
    let label = from_header.or_else(from_meta).unwrap_or_else(|| "utf-8".into());
    let encoding = encoding_rs::Encoding::for_label(label.as_bytes()).unwrap_or(encoding_rs::UTF_8);
    encoding.decode(bytes).0.into_owned()
}

impl scholia_base::Summary for Page {
    fn summary(&self) -> String {
        format!(
            "{} characters from {} via {:?}{}",
            self.content.markdown.chars().count(),
            self.url,
            self.content.method,
            if self.content.truncated { ", truncated" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_classes() {
        let check = |ip: &str, expected: Option<&str>| assert_eq!(blocked_kind(ip.parse().unwrap()), expected, "{ip}");
        check("127.0.0.1", Some("loopback"));
        check("10.1.2.3", Some("private"));
        check("172.16.0.1", Some("private"));
        check("192.168.1.1", Some("private"));
        check("169.254.169.254", Some("link-local"));
        check("100.64.0.1", Some("CGNAT"));
        check("100.128.0.1", None);
        check("224.0.0.1", Some("multicast"));
        check("0.0.0.0", Some("reserved"));
        check("255.255.255.255", Some("reserved"));
        check("93.184.216.34", None);
        check("::1", Some("loopback"));
        check("::ffff:127.0.0.1", Some("loopback"));
        check("::ffff:10.0.0.1", Some("private"));
        check("fe80::1", Some("link-local"));
        check("fd00::1", Some("private"));
        check("ff02::1", Some("multicast"));
        check("64:ff9b::a9fe:a9fe", Some("link-local"));
        check("2606:4700::1111", None);
        check("::7f00:1", Some("loopback"));
        check("::a00:1", Some("private"));
        check("::808:808", Some("IPv4-compatible"));
        check("::ffff:0:7f00:1", Some("loopback"));
        check("::ffff:0:808:808", Some("IPv4-translated"));
        check("2002:7f00:1::", Some("loopback"));
        check("2002:a9fe:a9fe::1", Some("link-local"));
        check("2002:808:808::1", None);
        check("2001:0:4136:e378:8000:63bf:80ff:fffe", Some("loopback"));
        check("2001:0:4136:e378:8000:63bf:f7f7:f7f7", Some("Teredo"));
        check("fec0::1", Some("site-local"));
        check("100.100.100.200", Some("CGNAT"));
        check("fd00:ec2::254", Some("private"));
        check("::ffff:169.254.169.254", Some("link-local"));
    }

    #[test]
    fn charsets() {
        assert_eq!(decode(b"caf\xe9", "text/html; charset=iso-8859-1"), "café");
        assert_eq!(
            decode(b"<meta charset=\"windows-1252\">caf\xe9", "text/html"),
            "<meta charset=\"windows-1252\">café"
        );
        assert_eq!(decode("café".as_bytes(), "text/html"), "café");
    }

    #[tokio::test]
    async fn refusals_before_any_connection() {
        let f = Fetcher::new(false);
        let t = Duration::from_secs(5);
        let err = |r: Result<Fetched, FetchError>| r.unwrap_err().to_string();
        assert_eq!(
            err(f.fetch("ftp://example.org/x", t).await),
            "url `ftp://example.org/x`: only http and https URLs are fetched"
        );
        assert_eq!(
            err(f.fetch("file:///etc/passwd", t).await),
            "url `file:///etc/passwd`: only http and https URLs are fetched"
        );
        assert!(err(f.fetch("http://127.0.0.1:1/", t).await).contains("loopback address"));
        assert!(err(f.fetch("http://[::1]/", t).await).contains("loopback address"));
        assert!(err(f.fetch("http://169.254.169.254/latest/meta-data", t).await).contains("link-local"));
        assert!(err(f.fetch("http://localhost:9/", t).await).contains("loopback address"));
        assert!(err(f.fetch("not a url", t).await).contains("not a valid URL"));
        // Test mode admits loopback fakes, never the metadata services.
        let lenient = Fetcher::new(true);
        assert!(err(lenient.fetch("http://169.254.169.254/latest/meta-data", t).await).contains("link-local"));
        assert!(err(lenient.fetch("http://100.100.100.200/latest/meta-data", t).await).contains("metadata"));
        assert!(err(lenient.fetch("http://[fd00:ec2::254]/latest/meta-data", t).await).contains("metadata"));
        assert!(err(f.fetch("http://[::7f00:1]:9/", t).await).contains("loopback"));
    }
}
