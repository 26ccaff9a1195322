//! `web_fetch`: a URL in, the page's main content as Markdown out. It runs in the engine (not in
//! the command sandbox), http(s) only, with a timeout, a size cap, bounded redirects and a page
//! cache for the session; a long page is spilled to a file the model pages through like any
//! oversized result.
//!
//! No request goes to a loopback, private, link-local (cloud metadata), unique-local or otherwise
//! non-public address ([`address`]) unless the host is listed in `[web] allow_private_hosts` or
//! the user approved this very call. The check is made after DNS resolution, and the connection
//! goes to the addresses checked (the name is pinned to them, so a second answer from DNS cannot
//! switch it); every redirect hop is resolved and checked again. Redirects are followed on the
//! same host only; one to another host is reported to the model, whose next call of that URL is
//! approved for its own host. Approval is per host (once, or always for the host this session).
//!
//! A PDF (served as `application/pdf`, or any body starting as a PDF does, such as a `.pdf`
//! served as `application/octet-stream`) comes back as its text, page by page, read by a child
//! process ([`pdf`]); an encrypted or scanned PDF, or one the reader fails on, is a plain error.

mod address;
mod markdown;
pub(crate) mod pdf;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Url;
use serde_json::{Value, json};

use super::args::Args;
use super::{ToolCtx, ToolError, ToolOutput, ToolResult};
use crate::engine::types::ToolSpec;

pub use address::non_public;
pub use markdown::{Page, convert};
pub use pdf::PdfReader;

/// Redirects followed at most.
pub const MAX_REDIRECTS: usize = 5;
/// A whole fetch, every hop included, takes at most this long.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A response body larger than this is refused.
pub const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;
/// How long a fetched page is served from the cache.
const CACHE_TTL: Duration = Duration::from_secs(15 * 60);
/// Pages the cache holds at most.
const CACHE_PAGES: usize = 64;

/// What `web_fetch` may reach, and its page cache (shared by the session's calls).
#[derive(Debug, Clone)]
pub struct WebAccess {
    /// `[web] allow_private_hosts`: `host` or `host:port` entries that may resolve to
    /// non-public addresses (`localhost:3000`, `127.0.0.1:8080`, `devbox`).
    pub allow_private_hosts: Vec<String>,
    /// How long one fetch may take, every hop and the whole body included.
    pub timeout: Duration,
    /// Names resolved to these addresses instead of asking DNS (as curl's `--resolve`); checked
    /// like any other answer.
    hosts: HashMap<String, Vec<IpAddr>>,
    /// What reads a PDF's text, and its limits.
    pub pdf: PdfReader,
    cache: PageCache,
}

impl Default for WebAccess {
    fn default() -> Self {
        WebAccess::new(Vec::new())
    }
}

/// Two accesses are the same when they allow the same hosts within the same time (the cache is
/// not part of it).
impl PartialEq for WebAccess {
    fn eq(&self, other: &Self) -> bool {
        self.allow_private_hosts == other.allow_private_hosts
            && self.timeout == other.timeout
            && self.hosts == other.hosts
            && self.pdf == other.pdf
    }
}

impl Eq for WebAccess {}

impl WebAccess {
    /// An access allowing `hosts` to be private, with the default timeout and an empty cache.
    pub fn new(allow_private_hosts: Vec<String>) -> Self {
        WebAccess {
            allow_private_hosts,
            timeout: FETCH_TIMEOUT,
            hosts: HashMap::new(),
            pdf: PdfReader::default(),
            cache: PageCache::default(),
        }
    }

    /// The same access with `name` resolving to `addrs` (without a DNS query).
    pub fn with_host(mut self, name: &str, addrs: Vec<IpAddr>) -> Self {
        self.hosts.insert(name.to_ascii_lowercase(), addrs);
        self
    }

    /// The same access with fetches cut off after `timeout`.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The same access with PDFs read by `reader`.
    pub fn with_pdf_reader(mut self, reader: PdfReader) -> Self {
        self.pdf = reader;
        self
    }

    /// Whether `host:port` is listed in `allow_private_hosts` (an entry without a port allows
    /// every port of the host).
    pub fn allows_private(&self, host: &str, port: u16) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        self.allow_private_hosts.iter().any(|entry| {
            let entry = entry.trim().to_ascii_lowercase();
            let (h, p) = split_host_port(&entry);
            h == host.to_ascii_lowercase() && p.is_none_or(|p| p == port)
        })
    }
}

/// `host` and `port` of a `host[:port]` entry (`[::1]:3000` for IPv6).
fn split_host_port(entry: &str) -> (&str, Option<u16>) {
    if let Some(rest) = entry.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((h, tail)) => (h, tail.strip_prefix(':').and_then(|p| p.parse().ok())),
            None => (rest, None),
        };
    }
    match entry.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => match p.parse() {
            Ok(port) => (h, Some(port)),
            Err(_) => (entry, None),
        },
        _ => (entry, None),
    }
}

/// Pages fetched this session, by URL, for [`CACHE_TTL`].
#[derive(Debug, Clone, Default)]
struct PageCache(Arc<Mutex<HashMap<String, (Instant, String)>>>);

impl PageCache {
    fn get(&self, url: &str) -> Option<String> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.get(url)
            .filter(|(at, _)| at.elapsed() < CACHE_TTL)
            .map(|(_, page)| page.clone())
    }

    fn put(&self, url: &str, page: &str) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|_, (at, _)| at.elapsed() < CACHE_TTL);
        if map.len() >= CACHE_PAGES
            && let Some(oldest) = map
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(k, _)| k.clone())
        {
            map.remove(&oldest);
        }
        map.insert(url.to_string(), (Instant::now(), page.to_string()));
    }
}

pub(super) fn spec() -> ToolSpec {
    ToolSpec {
        name: super::names::WEB_FETCH.into(),
        description: format!(
            "Fetch a web page (http or https) and return its main content as Markdown: \
             headings, lists, links, code blocks and tables kept; scripts, styles and \
             navigation dropped. Plain text and JSON come back as they are; a PDF comes back as its \
             text, page by page (not a scanned or encrypted one); other types (images, \
             archives) are refused. Redirects on the same host are followed (at most \
             {MAX_REDIRECTS}); a redirect to another host is reported, fetch that URL next. \
             Local and private addresses are refused unless the user allowed them. Each host \
             is approved by the user. A long page is saved to a file you can read page by page."
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The page's URL, http:// or https://."}
            },
            "required": ["url"],
            "additionalProperties": false
        }),
    }
}

/// `web_fetch: https://docs.rs/…`.
pub(crate) fn summary(input: &Value) -> Option<String> {
    input
        .get("url")
        .and_then(Value::as_str)
        .map(|u| crate::engine::text::one_line(u, 100))
}

/// The URL of a call, checked: absolute, http or https, with a host, holding no secret.
fn parse_url(raw: &str) -> Result<Url, ToolError> {
    // A key registered as a secret (the model provider's, any `*_API_KEY`) never leaves in a
    // URL: not to the host, not to a DNS server. The message does not repeat the URL.
    if crate::engine::secrets::redact(raw) != raw {
        return Err(ToolError(
            "Refused: the URL holds a secret (an API key flower-tui masks); web_fetch never \
             sends one to a web site."
                .into(),
        ));
    }
    let url = Url::parse(raw.trim()).map_err(|e| {
        ToolError(format!(
            "`{raw}` is not a URL ({e}); give an absolute http(s) URL."
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError(format!(
            "web_fetch reads http and https URLs only, not `{}:`.",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ToolError(format!("`{raw}` names no host.")));
    }
    Ok(url)
}

/// Where a URL goes: its host, port and the addresses its name resolves to.
#[derive(Debug, Clone)]
struct Target {
    host: String,
    port: u16,
    addrs: Vec<SocketAddr>,
    /// The first non-public address among them, and what kind it is.
    private: Option<(IpAddr, &'static str)>,
}

impl Target {
    /// Resolve `url`'s host (an IP literal is taken as it is).
    async fn resolve(url: &Url, access: &WebAccess) -> Result<Target, ToolError> {
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let port = url.port_or_known_default().unwrap_or(80);
        let literal = host.trim_start_matches('[').trim_end_matches(']');
        let given = access.hosts.get(&host);
        let addrs: Vec<SocketAddr> = match (literal.parse::<IpAddr>(), given) {
            (Ok(ip), _) => vec![SocketAddr::new(ip, port)],
            (Err(_), Some(ips)) => ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect(),
            (Err(_), None) => tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|e| ToolError(format!("Cannot resolve {host}: {e}")))?
                .collect(),
        };
        if addrs.is_empty() {
            return Err(ToolError(format!("{host} resolves to no address.")));
        }
        let private = addrs
            .iter()
            .find_map(|a| non_public(a.ip()).map(|kind| (a.ip(), kind)));
        Ok(Target {
            host,
            port,
            addrs,
            private,
        })
    }

    /// Why this target must be approved call by call (None: it is public, or listed).
    fn private_reason(&self, access: &WebAccess) -> Option<String> {
        let (ip, kind) = self.private?;
        if access.allows_private(&self.host, self.port) {
            return None;
        }
        Some(format!("{} resolves to {ip}, a {kind} address", self.host))
    }
}

/// Why a call must be approved call by call: its host resolves to a non-public address that
/// `[web] allow_private_hosts` does not list. None for a public host, a listed one, and a URL
/// that will fail anyway (the call says why when it runs). This resolves the host's name (a
/// DNS query): use it only where the call would be made unasked, else [`before_asking`].
pub(crate) async fn private_reason(input: &Value, access: &WebAccess) -> Option<String> {
    let url = parse_url(input.get("url")?.as_str()?).ok()?;
    Target::resolve(&url, access)
        .await
        .ok()?
        .private_reason(access)
}

/// What is known of a call before the user is asked, without a DNS query (a name the model
/// chose could carry data to its own name server): an error for a call that fails anyway (not
/// an http(s) URL, a secret in it), and why it must be approved call by call when its host is
/// a private address literally (`127.0.0.1`, `[::1]`, `localhost`) that no
/// `[web] allow_private_hosts` entry lists.
pub(crate) fn before_asking(
    input: &Value,
    access: &WebAccess,
) -> Result<Option<String>, ToolError> {
    let raw = input
        .get("url")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError("web_fetch needs a `url`.".into()))?;
    let url = parse_url(raw)?;
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let port = url.port_or_known_default().unwrap_or(80);
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    let kind = match literal.parse::<IpAddr>() {
        Ok(ip) => non_public(ip).map(|kind| (ip.to_string(), kind)),
        // Names under `localhost` are loopback wherever they are looked up.
        Err(_) if host == "localhost" || host.ends_with(".localhost") => {
            Some(("loopback".to_string(), "loopback (127/8)"))
        }
        Err(_) => None,
    };
    Ok(kind
        .filter(|_| !access.allows_private(&host, port))
        .map(|(ip, kind)| format!("{host} resolves to {ip}, a {kind} address")))
}

/// Run a call: the page as Markdown, or why not.
pub(crate) async fn run(args: &Args<'_>, ctx: &ToolCtx) -> ToolResult {
    let url = parse_url(args.str("url")?)?;
    let limit = ctx.web.timeout;
    match tokio::time::timeout(limit, fetch(url.clone(), ctx)).await {
        Ok(result) => result,
        Err(_) => Err(ToolError(format!(
            "{url} did not send the whole page within {}; nothing was kept. The server may be \
             slow or the response endless: try again later, or another page.",
            seconds(limit)
        ))),
    }
}

async fn fetch(url: Url, ctx: &ToolCtx) -> ToolResult {
    let first_host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let mut current = url.clone();
    for hop in 0..=MAX_REDIRECTS {
        let target = Target::resolve(&current, &ctx.web).await?;
        if let Some(why) = target.private_reason(&ctx.web) {
            // The user's approval covers the host it was given for (same-host redirects only).
            if !(ctx.allow_outside && target.host == first_host) {
                return Err(ToolError(format!(
                    "Refused: {why}. web_fetch reaches local and private addresses only for \
                     hosts listed in `[web] allow_private_hosts` in config.toml, or approved \
                     call by call in the TUI."
                )));
            }
        }
        // Checked first: a page cached for an earlier call is served only where a new request
        // would be allowed.
        if hop == 0
            && let Some(page) = ctx.web.cache.get(url.as_str())
        {
            return Ok(ToolOutput::ok(page));
        }
        let resp = request(&current, &target, ctx.web.timeout).await?;
        let status = resp.status();
        if status.is_redirection() {
            let next = redirect_target(&current, &resp)?;
            let host = next.host_str().unwrap_or_default().to_ascii_lowercase();
            if host != target.host {
                return Ok(ToolOutput::ok(format!(
                    "{current} redirects to another host: {next}\nCall web_fetch with that URL \
                     to read it (its host is approved on its own)."
                )));
            }
            current = next;
            continue;
        }
        let page = read_page(&current, resp, &ctx.web.pdf).await?;
        ctx.web.cache.put(url.as_str(), &page);
        return Ok(ToolOutput::ok(page));
    }
    Err(ToolError(format!(
        "{url} redirected more than {MAX_REDIRECTS} times; giving up."
    )))
}

/// One request to `url`, connecting only to `target`'s checked addresses.
async fn request(
    url: &Url,
    target: &Target,
    timeout: Duration,
) -> Result<reqwest::Response, ToolError> {
    crate::engine::provider::http::install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        // The whole fetch is timed around it (`run`); a connection gets a part of that.
        .connect_timeout(CONNECT_TIMEOUT.min(timeout))
        .user_agent(concat!(
            "flower-tui/",
            env!("CARGO_PKG_VERSION"),
            " (web_fetch)"
        ));
    let is_name = target
        .host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .is_err();
    if is_name {
        builder = builder.resolve_to_addrs(&target.host, &target.addrs);
    }
    let client = builder
        .build()
        .map_err(|e| ToolError(format!("web_fetch could not start a client: {e}")))?;
    client
        .get(url.clone())
        .header(
            reqwest::header::ACCEPT,
            "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5",
        )
        .send()
        .await
        .map_err(|e| ToolError(format!("Cannot fetch {url}: {}", error_chain(&e))))
}

fn error_chain(e: &reqwest::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

/// Where a redirect goes (relative locations taken from the current URL), checked like a call.
fn redirect_target(current: &Url, resp: &reqwest::Response) -> Result<Url, ToolError> {
    let location = resp
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| {
            ToolError(format!(
                "{current} answered {} without a Location to go to.",
                resp.status()
            ))
        })?;
    let next = current.join(location).map_err(|e| {
        ToolError(format!(
            "{current} redirects to a bad URL `{location}`: {e}"
        ))
    })?;
    parse_url(next.as_str())
}

/// The body of a 2xx response, as the model gets it.
async fn read_page(
    url: &Url,
    mut resp: reqwest::Response,
    pdf: &PdfReader,
) -> Result<String, ToolError> {
    let status = resp.status();
    if !status.is_success() {
        return Err(ToolError(format!(
            "{url} answered HTTP {status}; no page to read."
        )));
    }
    let ctype = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    // A type it cannot read is refused before the body is read, unless the body may be a PDF
    // under a generic type (it is then sniffed).
    let kind = Kind::of(&ctype);
    let refused = |what: &str| {
        ToolError(format!(
            "{url} is {what} (`{ctype}`); web_fetch reads HTML, plain text, JSON and PDF only."
        ))
    };
    if let Err(what) = kind
        && !Kind::may_be_pdf(&ctype, url)
    {
        return Err(refused(what));
    }
    if resp
        .content_length()
        .is_some_and(|n| n > MAX_BODY_BYTES as u64)
    {
        return Err(too_large(url));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ToolError(format!("Reading {url} failed: {}", error_chain(&e))))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_BODY_BYTES {
            return Err(too_large(url));
        }
    }
    let kind = match kind {
        Ok(Kind::Html) if pdf::sniff(&body) => Kind::Pdf,
        Ok(kind) => kind,
        Err(_) if pdf::sniff(&body) => Kind::Pdf,
        Err(what) => return Err(refused(what)),
    };
    if let Kind::Pdf = kind {
        return pdf::text(url, body, pdf).await;
    }
    let text = decode(&body, &ctype, matches!(kind, Kind::Html));
    Ok(match kind {
        Kind::Html => {
            let html = text;
            let page = tokio::task::spawn_blocking(move || convert(&html))
                .await
                .map_err(|e| ToolError(format!("Converting {url} failed: {e}")))?;
            let mut out = String::with_capacity(page.markdown.len() + 200);
            if let Some(title) = &page.title {
                out.push_str(&format!("# {title}\n"));
            }
            out.push_str(&format!("Source: {url}\n\n"));
            if page.markdown.is_empty() {
                out.push_str("(the page has no readable content; it may need JavaScript)");
            } else {
                out.push_str(&page.markdown);
            }
            out
        }
        Kind::Text | Kind::Pdf => format!("Source: {url} ({ctype})\n\n{text}"),
    })
}

/// `1.5 s`, `30 s`.
fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// The body as text in its charset: the Content-Type's `charset`, else (HTML) the page's own
/// `<meta charset>` in its first bytes, else a byte-order mark, else UTF-8 (bytes that are not
/// UTF-8 become U+FFFD).
fn decode(body: &[u8], ctype: &str, html: bool) -> String {
    let label = charset(ctype).or_else(|| {
        html.then(|| {
            let head = body.get(..body.len().min(META_SNIFF_BYTES)).unwrap_or(body);
            charset(&String::from_utf8_lossy(head).to_ascii_lowercase())
        })
        .flatten()
    });
    let encoding = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// How far into an HTML page its `<meta charset>` is looked for.
const META_SNIFF_BYTES: usize = 2048;

/// The value after the first `charset=` in `s` (a Content-Type, or a page's head in lower
/// case), without quotes.
fn charset(s: &str) -> Option<String> {
    let at = s.to_ascii_lowercase().find("charset=")?;
    let rest = s.get(at + "charset=".len()..)?;
    let value: String = rest
        .trim_start_matches(['"', '\'', ' '])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
        .collect();
    (!value.is_empty()).then_some(value)
}

fn too_large(url: &Url) -> ToolError {
    ToolError(format!(
        "{url} is larger than {} MB; web_fetch does not read pages that large.",
        MAX_BODY_BYTES / (1024 * 1024)
    ))
}

/// How a response's body is read.
enum Kind {
    Html,
    Text,
    /// Its text is read by a child process.
    Pdf,
}

impl Kind {
    /// The kind for a content type, or what the type is in words (refused).
    fn of(ctype: &str) -> Result<Kind, &'static str> {
        let mime = ctype.split(';').next().unwrap_or("").trim();
        match mime {
            "text/html" | "application/xhtml+xml" | "" => Ok(Kind::Html),
            "application/json"
            | "application/ld+json"
            | "application/xml"
            | "application/javascript"
            | "application/x-yaml"
            | "application/yaml" => Ok(Kind::Text),
            m if m.starts_with("text/") || m.ends_with("+json") || m.ends_with("+xml") => {
                Ok(Kind::Text)
            }
            "application/pdf" | "application/x-pdf" => Ok(Kind::Pdf),
            m if m.starts_with("image/") => Err("an image"),
            m if m.starts_with("audio/") || m.starts_with("video/") => Err("audio or video"),
            _ => Err("not a text document"),
        }
    }

    /// Whether a body of a type [`Kind::of`] refuses is read anyway, to see whether it is a
    /// PDF: a generic binary type, or a URL whose path ends in `.pdf`.
    fn may_be_pdf(ctype: &str, url: &Url) -> bool {
        let mime = ctype.split(';').next().unwrap_or("").trim();
        matches!(
            mime,
            "application/octet-stream" | "binary/octet-stream" | "application/download"
        ) || url.path().to_ascii_lowercase().ends_with(".pdf")
    }
}

#[cfg(test)]
mod tests;
