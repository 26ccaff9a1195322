//! MCP server configuration: TOML tables and `.mcp.json`, the errors that name their key, the
//! expansion rules, and how the files merge.

use super::parse::expand;
use super::*;
fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |k| {
        pairs
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    }
}

fn toml_servers(text: &str) -> Result<Vec<ServerConfig>, McpConfigError> {
    let value: toml::Value = toml::from_str(text).unwrap();
    let env = env_of(&[("HOME", "/home/u"), ("GH", "ghp_123"), ("PORT", "9000")]);
    from_toml(&value["mcp_servers"], &env)
}

fn one_err(text: &str) -> String {
    toml_servers(text).unwrap_err().to_string()
}

#[test]
fn toml_tables_of_both_kinds() {
    let servers = toml_servers(
        r#"
        [mcp_servers.github]
        command = "npx"
        args = ["-y", "@modelcontextprotocol/server-github"]
        env = { GITHUB_TOKEN = "${GH}", PLAIN = "x" }
        env_vars = ["PORT", "NOT_SET_ANYWHERE"]
        cwd = "~/src"
        startup_timeout = 20
        tool_timeout = 2.5

        [mcp_servers.docs]
        url = "http://127.0.0.1:${PORT}/mcp"
        headers = { Authorization = "Bearer ${GH}" }
        enabled = false
        "#,
    )
    .unwrap();
    assert_eq!(servers.len(), 2);
    let docs = &servers[0];
    assert_eq!(docs.name, "docs");
    assert!(!docs.enabled);
    assert_eq!(docs.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
    assert_eq!(docs.tool_timeout, DEFAULT_TOOL_TIMEOUT);
    assert_eq!(
        docs.transport,
        Transport::Http {
            url: "http://127.0.0.1:9000/mcp".into(),
            headers: [("Authorization".to_string(), "Bearer ghp_123".to_string())].into(),
        }
    );
    let gh = &servers[1];
    assert_eq!(gh.origin, Origin::ConfigFile);
    assert_eq!(gh.startup_timeout, Duration::from_secs(20));
    assert_eq!(gh.tool_timeout, Duration::from_millis(2500));
    assert_eq!(
        gh.transport,
        Transport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "@modelcontextprotocol/server-github".into()],
            env: [
                ("GITHUB_TOKEN".to_string(), "ghp_123".to_string()),
                ("PLAIN".to_string(), "x".to_string()),
                ("PORT".to_string(), "9000".to_string()),
            ]
            .into(),
            cwd: Some(PathBuf::from("/home/u/src")),
        }
    );
    assert_eq!(gh.transport.secret_values(), ["ghp_123"]);
    assert_eq!(
        docs.transport.secret_values(),
        ["Bearer ghp_123", "ghp_123"]
    );
    // Debug never shows env or header values.
    let debug = format!("{servers:?}");
    assert!(!debug.contains("ghp_123"), "{debug}");
    assert!(debug.contains("GITHUB_TOKEN=****") && debug.contains("Authorization: ****"));
    assert_eq!(
        gh.transport.summary(),
        "npx -y @modelcontextprotocol/server-github"
    );
}

#[test]
fn toml_errors_name_the_key() {
    let cases = [
        (
            "[mcp_servers.a]\ncomand = \"x\"",
            "key `mcp_servers.a.comand`: unknown key; accepted: type, command,",
        ),
        (
            "[mcp_servers.a]\ncommand = 3",
            "key `mcp_servers.a.command`: expected a string (got a number)",
        ),
        (
            "[mcp_servers.a]\ncommand = \"x\"\nargs = \"-y\"",
            "key `mcp_servers.a.args`: expected an array of strings (got a string)",
        ),
        (
            "[mcp_servers.a]\ncommand = \"x\"\nargs = [\"a\", 1]",
            "key `mcp_servers.a.args[1]`: expected a string (got a number)",
        ),
        (
            "[mcp_servers.a]\ncommand = \"x\"\nenv = { A = 1 }",
            "key `mcp_servers.a.env.A`: expected a string (got a number); quote it",
        ),
        (
            "[mcp_servers.a]\ncommand = \"x\"\nstartup_timeout = 0",
            "key `mcp_servers.a.startup_timeout`: accepted values: a number of seconds, more than 0 and at most 86400 (got 0)",
        ),
        (
            "[mcp_servers.a]\ncommand = \"x\"\ntool_timeout = \"10s\"",
            "key `mcp_servers.a.tool_timeout`: accepted values: a number of seconds, more than 0 and at most 86400 (got \"10s\")",
        ),
        (
            "[mcp_servers.a]\ncommand = \"x\"\nenabled = \"yes\"",
            "key `mcp_servers.a.enabled`: expected true or false (got a string)",
        ),
        (
            "[mcp_servers.a]\ncommand = \"x\"\nurl = \"http://h\"",
            "key `mcp_servers.a`: set either `command` (a program to run) or `url`, not both",
        ),
        (
            "[mcp_servers.a]\nargs = [\"x\"]",
            "key `mcp_servers.a`: needs `command` (a program to run over stdio) or `url`",
        ),
        (
            "[mcp_servers.a]\nurl = \"ftp://h/x\"",
            "key `mcp_servers.a.url`: expected an http:// or https:// URL (got scheme `ftp`)",
        ),
        (
            "[mcp_servers.a]\nurl = \"not a url\"",
            "key `mcp_servers.a.url`: not a URL",
        ),
        (
            "[mcp_servers.a]\nurl = \"http://h\"\nargs = []",
            "key `mcp_servers.a.args`: applies to stdio servers only",
        ),
        (
            "[mcp_servers.a]\ncommand = \"x\"\nheaders = {}",
            "key `mcp_servers.a.headers`: applies to HTTP servers only",
        ),
        (
            "[mcp_servers.a]\nurl = \"http://h\"\nheaders = { \"bad header\" = \"v\" }",
            "key `mcp_servers.a.headers.bad header`: not a valid HTTP header name",
        ),
        (
            "[mcp_servers.a]\ntype = \"sse\"\nurl = \"http://h/sse\"",
            "key `mcp_servers.a.type`: the old HTTP+SSE transport is not supported",
        ),
        (
            "[mcp_servers.a]\ntype = \"grpc\"\ncommand = \"x\"",
            "key `mcp_servers.a.type`: accepted values: stdio, http (got \"grpc\")",
        ),
        (
            "[mcp_servers.a]\ncommand = \"${NOPE}\"",
            "key `mcp_servers.a.command`: environment variable `NOPE` is not set (write ${NOPE:-default} for a default)",
        ),
        (
            "[mcp_servers.a]\ncommand = \"${GH\"",
            "key `mcp_servers.a.command`: `${` without a closing `}`",
        ),
        (
            "[mcp_servers.a]\ncommand = \"${1X}\"",
            "key `mcp_servers.a.command`: `${1X}` is not a variable reference",
        ),
        (
            "[mcp_servers.\"my server\"]\ncommand = \"x\"",
            "key `mcp_servers.my server`: a server name is 1 to 32 letters",
        ),
        (
            "[mcp_servers.a__b]\ncommand = \"x\"",
            "key `mcp_servers.a__b`: a server name is 1 to 32 letters, digits, `_` or `-`, without `__`",
        ),
        (
            "[mcp_servers]\na = 1",
            "key `mcp_servers.a`: expected a table (got a number)",
        ),
        (
            "mcp_servers = 1",
            "key `mcp_servers`: expected a table of servers (got a number)",
        ),
    ];
    for (text, want) in cases {
        let got = one_err(text);
        assert!(got.starts_with(want), "{text:?}\n got: {got}\nwant: {want}");
        assert!(!got.contains('\n'), "one line: {got}");
    }
}

#[test]
fn expansion_rules() {
    let env = env_of(&[("A", "1"), ("EMPTY", "")]);
    let ex = |s: &str| expand(s, "k", &env);
    assert_eq!(ex("x${A}y${A}").unwrap(), "x1y1");
    assert_eq!(ex("${B:-dflt}").unwrap(), "dflt");
    assert_eq!(ex("${EMPTY:-dflt}").unwrap(), "dflt");
    assert_eq!(ex("${A:-dflt}").unwrap(), "1");
    assert_eq!(ex("$A and $ and {A}").unwrap(), "$A and $ and {A}");
    assert_eq!(ex("${B:-}").unwrap(), "");
    assert!(ex("${B}").is_err());
}

#[test]
fn mcp_json_in_the_claude_code_shape() {
    let text = r#"{
      "mcpServers": {
        "everything": { "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"],
                        "env": {"K": "v"}, "autoApprove": ["echo"] },
        "remote": { "type": "http", "url": "https://example.com/mcp", "headers": {"X-Key": "${GH:-none}"} },
        "legacy": { "url": "https://example.com/other" },
        "off": { "command": "x", "disabled": true }
      },
      "otherTool": {}
    }"#;
    let env = env_of(&[]);
    let servers = from_mcp_json(text, &env).unwrap();
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["everything", "legacy", "off", "remote"]);
    assert!(servers.iter().all(|s| s.origin == Origin::McpJson));
    assert!(matches!(&servers[0].transport, Transport::Stdio { command, .. } if command == "npx"));
    assert!(
        matches!(&servers[1].transport, Transport::Http { url, .. } if url == "https://example.com/other")
    );
    assert!(!servers[2].enabled);
    assert!(
        matches!(&servers[3].transport, Transport::Http { headers, .. } if headers["X-Key"] == "none")
    );

    assert_eq!(from_mcp_json("{}", &env).unwrap(), vec![]);
    let bad = from_mcp_json("{\"mcpServers\": {\"a\": {\"command\": [\"x\"]}}}", &env).unwrap_err();
    assert_eq!(
        bad.to_string(),
        "key `mcpServers.a.command`: expected a string (got an array)"
    );
    let bad = from_mcp_json("{\"mcpServers\": ", &env).unwrap_err();
    assert!(
        bad.to_string()
            .starts_with("key `mcpServers`: not valid JSON (line 1, column 15)"),
        "{bad}"
    );
    let bad = from_mcp_json("[]", &env).unwrap_err();
    assert_eq!(
        bad.to_string(),
        "key `mcpServers`: the file must hold a JSON object (got an array)"
    );
}

#[test]
fn read_and_merge() {
    let ws = tempfile::tempdir().unwrap();
    assert_eq!(read_mcp_json(ws.path()).unwrap(), None);
    std::fs::write(
        ws.path().join(MCP_JSON),
        r#"{"mcpServers":{"a":{"command":"p"},"b":{"command":"q"}}}"#,
    )
    .unwrap();
    let file = read_mcp_json(ws.path()).unwrap().unwrap();
    let env = env_of(&[]);
    let project = file.servers(&env).unwrap();
    let user = toml_servers("[mcp_servers.a]\ncommand = \"mine\"").unwrap();
    let (all, notices) = merge(user, project);
    let summary: Vec<(String, Origin)> = all
        .iter()
        .map(|s| (s.transport.summary(), s.origin))
        .collect();
    assert_eq!(
        summary,
        [
            ("mine".to_string(), Origin::ConfigFile),
            ("q".to_string(), Origin::McpJson)
        ]
    );
    assert_eq!(
        notices,
        ["MCP server `a` in .mcp.json is skipped: config.toml names a server `a` too"]
    );
    let not_utf8 = McpJsonFile {
        path: file.path.clone(),
        bytes: vec![0xff, 0xfe],
    };
    assert_eq!(
        not_utf8.servers(&env).unwrap_err().to_string(),
        "key `mcpServers`: the file is not UTF-8 text"
    );
}

#[test]
fn a_value_kind_names_an_object_as_its_caller_asks() {
    // The config calls an object a table (TOML); a tool call's arguments call it an object.
    assert_eq!(kind(&serde_json::json!({})), "a table");
    assert_eq!(value_kind(&serde_json::json!({}), "an object"), "an object");
    for (v, name) in [
        (serde_json::json!(null), "null"),
        (serde_json::json!(true), "a boolean"),
        (serde_json::json!(1.5), "a number"),
        (serde_json::json!("x"), "a string"),
        (serde_json::json!([1]), "an array"),
    ] {
        assert_eq!(kind(&v), name);
        assert_eq!(value_kind(&v, "an object"), name);
    }
}
