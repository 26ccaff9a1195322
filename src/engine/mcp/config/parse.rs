//! The one parser behind both config shapes: a JSON value of servers to [`ServerConfig`]s, with
//! one-line errors naming the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, EnvLookup, McpConfigError, Origin, ServerConfig,
    Transport, err, valid_server_name,
};

const TOML_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "env_vars",
    "cwd",
    "url",
    "headers",
    "http_headers",
    "enabled",
    "disabled",
    "startup_timeout",
    "startup_timeout_sec",
    "tool_timeout",
    "tool_timeout_sec",
];

pub(super) fn parse_servers(
    value: &Value,
    prefix: &str,
    origin: Origin,
    env: EnvLookup<'_>,
) -> Result<Vec<ServerConfig>, McpConfigError> {
    let Some(servers) = value.as_object() else {
        return Err(err(
            prefix,
            format!("expected a table of servers (got {})", kind(value)),
        ));
    };
    let mut out = Vec::new();
    // In name order, whatever order the JSON map keeps (the ACP SDK has serde_json keep the
    // file's).
    let mut servers: Vec<_> = servers.iter().collect();
    servers.sort_by(|a, b| a.0.cmp(b.0));
    for (name, body) in servers {
        let key = format!("{prefix}.{name}");
        if !valid_server_name(name) {
            return Err(err(
                key,
                "a server name is 1 to 32 letters, digits, `_` or `-`, without `__` (it becomes part of its tool names, mcp__<server>__<tool>)",
            ));
        }
        let Some(body) = body.as_object() else {
            return Err(err(key, format!("expected a table (got {})", kind(body))));
        };
        out.push(parse_server(name, body, &key, origin, env)?);
    }
    Ok(out)
}

/// One server's table: where it runs (stdio or HTTP), whether it is on, its timeouts.
fn parse_server(
    name: &str,
    body: &Map<String, Value>,
    key: &str,
    origin: Origin,
    env: EnvLookup<'_>,
) -> Result<ServerConfig, McpConfigError> {
    let at = |k: &str| format!("{key}.{k}");
    if origin == Origin::ConfigFile
        && let Some(unknown) = body.keys().find(|k| !TOML_KEYS.contains(&k.as_str()))
    {
        return Err(err(
            at(unknown),
            format!("unknown key; accepted: {}", TOML_KEYS.join(", ")),
        ));
    }
    let kind_given = opt_str(body, "type", &at("type"))?;
    let command = opt_str(body, "command", &at("command"))?;
    let url = opt_str(body, "url", &at("url"))?;
    let transport = if is_http(kind_given.as_deref(), key, command.is_some(), url.is_some())? {
        http_transport(body, key, url, env)?
    } else {
        stdio_transport(body, key, command, env)?
    };
    let enabled = match (
        opt_bool(body, "enabled", &at("enabled"))?,
        opt_bool(body, "disabled", &at("disabled"))?,
    ) {
        (Some(e), _) => e,
        (None, Some(d)) => !d,
        (None, None) => true,
    };
    let startup_timeout = secs(body, &["startup_timeout", "startup_timeout_sec"], key)?
        .unwrap_or(DEFAULT_STARTUP_TIMEOUT);
    let tool_timeout =
        secs(body, &["tool_timeout", "tool_timeout_sec"], key)?.unwrap_or(DEFAULT_TOOL_TIMEOUT);
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        enabled,
        startup_timeout,
        tool_timeout,
        origin,
    })
}

/// Whether the server is reached over HTTP: its `type`, else a `url` without a `command`.
fn is_http(
    kind_given: Option<&str>,
    key: &str,
    has_command: bool,
    has_url: bool,
) -> Result<bool, McpConfigError> {
    let type_key = format!("{key}.type");
    match kind_given {
        Some("stdio") => Ok(false),
        Some("http" | "streamable-http" | "streamable_http" | "streamableHttp") => Ok(true),
        Some("sse") => Err(err(
            type_key,
            "the old HTTP+SSE transport is not supported; use the server's streamable HTTP endpoint (type \"http\", often a URL ending in /mcp)",
        )),
        Some(other) => Err(err(
            type_key,
            format!("accepted values: stdio, http (got \"{other}\")"),
        )),
        None if has_command && has_url => Err(err(
            key,
            "set either `command` (a program to run) or `url`, not both",
        )),
        None => Ok(has_url && !has_command),
    }
}

/// An HTTP server: its URL and headers, expanded and checked; no stdio key.
fn http_transport(
    body: &Map<String, Value>,
    key: &str,
    url: Option<String>,
    env: EnvLookup<'_>,
) -> Result<Transport, McpConfigError> {
    let at = |k: &str| format!("{key}.{k}");
    for stdio_only in ["command", "args", "env", "env_vars", "cwd"] {
        if body.contains_key(stdio_only) {
            return Err(err(
                at(stdio_only),
                "applies to stdio servers only (this one has a `url`)",
            ));
        }
    }
    let Some(url) = url else {
        return Err(err(at("url"), "an HTTP server needs a `url`"));
    };
    let url = expand(&url, &at("url"), env)?;
    check_url(&url, &at("url"))?;
    let mut headers = BTreeMap::new();
    for hkey in ["headers", "http_headers"] {
        for (h, v) in str_map(body, hkey, &at(hkey))? {
            let hk = format!("{}.{h}", at(hkey));
            let v = expand(&v, &hk, env)?;
            check_header(&h, &v, &hk)?;
            headers.insert(h, v);
        }
    }
    Ok(Transport::Http { url, headers })
}

/// A stdio server: its command, arguments, environment and working directory; no HTTP key.
fn stdio_transport(
    body: &Map<String, Value>,
    key: &str,
    command: Option<String>,
    env: EnvLookup<'_>,
) -> Result<Transport, McpConfigError> {
    let at = |k: &str| format!("{key}.{k}");
    for http_only in ["url", "headers", "http_headers"] {
        if body.contains_key(http_only) {
            return Err(err(
                at(http_only),
                "applies to HTTP servers only (this one runs a `command`)",
            ));
        }
    }
    let Some(command) = command else {
        return Err(err(
            key,
            "needs `command` (a program to run over stdio) or `url` (a streamable HTTP endpoint)",
        ));
    };
    let command = expand(&command, &at("command"), env)?;
    if command.trim().is_empty() {
        return Err(err(at("command"), "must not be empty"));
    }
    let mut args = Vec::new();
    if let Some(v) = body.get("args") {
        let Some(items) = v.as_array() else {
            return Err(err(
                at("args"),
                format!("expected an array of strings (got {})", kind(v)),
            ));
        };
        for (i, item) in items.iter().enumerate() {
            let k = format!("{}[{i}]", at("args"));
            let Some(s) = item.as_str() else {
                return Err(err(k, format!("expected a string (got {})", kind(item))));
            };
            args.push(expand(s, &k, env)?);
        }
    }
    let vars = stdio_env(body, key, env)?;
    let cwd = match opt_str(body, "cwd", &at("cwd"))? {
        None => None,
        Some(c) => {
            let c = expand(&c, &at("cwd"), env)?;
            Some(home_relative(&c, env))
        }
    };
    Ok(Transport::Stdio {
        command,
        args,
        env: vars,
        cwd,
    })
}

/// A stdio server's environment: the variables `env_vars` passes through, then `env`'s own.
fn stdio_env(
    body: &Map<String, Value>,
    key: &str,
    env: EnvLookup<'_>,
) -> Result<BTreeMap<String, String>, McpConfigError> {
    let at = |k: &str| format!("{key}.{k}");
    let mut vars = BTreeMap::new();
    if let Some(v) = body.get("env_vars") {
        let names = v.as_array().filter(|a| a.iter().all(Value::is_string));
        let Some(names) = names else {
            return Err(err(
                at("env_vars"),
                format!("expected an array of variable names (got {})", kind(v)),
            ));
        };
        for n in names.iter().filter_map(Value::as_str) {
            if let Some(val) = env(n) {
                vars.insert(n.to_string(), val);
            }
        }
    }
    for (k, v) in str_map(body, "env", &at("env"))? {
        let ek = format!("{}.{k}", at("env"));
        if k.is_empty() || k.contains('=') || k.contains('\0') {
            return Err(err(ek, "not a valid variable name"));
        }
        let v = expand(&v, &ek, env)?;
        if v.contains('\0') {
            return Err(err(ek, "the value holds a NUL byte"));
        }
        vars.insert(k, v);
    }
    Ok(vars)
}

/// A JSON value's kind, as the config's errors name it (an object is a table there).
pub(super) fn kind(v: &Value) -> &'static str {
    value_kind(v, "a table")
}

pub(in crate::engine::mcp) use crate::engine::text::value_kind;

fn opt_str(
    body: &Map<String, Value>,
    name: &str,
    key: &str,
) -> Result<Option<String>, McpConfigError> {
    match body.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(err(key, format!("expected a string (got {})", kind(v)))),
    }
}

fn opt_bool(
    body: &Map<String, Value>,
    name: &str,
    key: &str,
) -> Result<Option<bool>, McpConfigError> {
    match body.get(name) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(err(
            key,
            format!("expected true or false (got {})", kind(v)),
        )),
    }
}

fn str_map(
    body: &Map<String, Value>,
    name: &str,
    key: &str,
) -> Result<Vec<(String, String)>, McpConfigError> {
    let Some(v) = body.get(name) else {
        return Ok(Vec::new());
    };
    let Some(obj) = v.as_object() else {
        return Err(err(
            key,
            format!("expected a table of strings (got {})", kind(v)),
        ));
    };
    let mut out = Vec::new();
    for (k, v) in obj {
        match v {
            Value::String(s) => out.push((k.clone(), s.clone())),
            other => {
                return Err(err(
                    format!("{key}.{k}"),
                    format!("expected a string (got {}); quote it", kind(other)),
                ));
            }
        }
    }
    Ok(out)
}

/// A timeout in seconds (a whole or decimal number > 0) under the first of `names` present.
fn secs(
    body: &Map<String, Value>,
    names: &[&str],
    key: &str,
) -> Result<Option<Duration>, McpConfigError> {
    for name in names {
        let Some(v) = body.get(*name) else { continue };
        let k = format!("{key}.{name}");
        let n = v
            .as_f64()
            .filter(|n| n.is_finite() && *n > 0.0 && *n <= 86_400.0);
        return match n {
            Some(n) => Ok(Some(Duration::from_secs_f64(n))),
            None => Err(err(
                k,
                format!(
                    "accepted values: a number of seconds, more than 0 and at most 86400 (got {})",
                    shown(v)
                ),
            )),
        };
    }
    Ok(None)
}

fn shown(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("\"{s}\""),
        other => kind(other).to_string(),
    }
}

fn check_url(url: &str, key: &str) -> Result<(), McpConfigError> {
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(()),
        Ok(u) => Err(err(
            key,
            format!(
                "expected an http:// or https:// URL (got scheme `{}`)",
                u.scheme()
            ),
        )),
        Err(e) => Err(err(key, format!("not a URL: {e}"))),
    }
}

fn check_header(name: &str, value: &str, key: &str) -> Result<(), McpConfigError> {
    if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(err(key, "not a valid HTTP header name"));
    }
    if reqwest::header::HeaderValue::from_str(value).is_err() {
        return Err(err(
            key,
            "the value is not a valid HTTP header value (control characters?)",
        ));
    }
    Ok(())
}

/// `~/…` relative to `HOME`.
fn home_relative(path: &str, env: EnvLookup<'_>) -> PathBuf {
    match (path.strip_prefix("~/"), env("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// Expand `${VAR}` and `${VAR:-default}`; other `$` are kept. An unset variable without a default
/// is an error naming it.
pub fn expand(text: &str, key: &str, env: EnvLookup<'_>) -> Result<String, McpConfigError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let (before, tail) = rest.split_at(start);
        out.push_str(before);
        let body_and_more = tail.get(2..).unwrap_or("");
        let Some(end) = body_and_more.find('}') else {
            return Err(err(
                key,
                format!("`${{` without a closing `}}` in \"{text}\""),
            ));
        };
        let (body, after) = body_and_more.split_at(end);
        let (name, default) = match body.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (body, None),
        };
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            return Err(err(
                key,
                format!(
                    "`${{{body}}}` is not a variable reference (${{NAME}} or ${{NAME:-default}})"
                ),
            ));
        }
        match (env(name).filter(|v| !v.is_empty()), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => {
                return Err(err(
                    key,
                    format!(
                        "environment variable `{name}` is not set (write ${{{name}:-default}} for a default)"
                    ),
                ));
            }
        }
        rest = after.get(1..).unwrap_or("");
    }
    out.push_str(rest);
    Ok(out)
}
