//! Unit tests of the configuration: precedence, windows, keys, masking, bad values.

use super::*;

fn env(pairs: &[(&str, &str)], dir: &Path) -> Env {
    let mut m: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    m.insert(
        "XDG_DATA_HOME".into(),
        dir.join("data").display().to_string(),
    );
    m.insert(
        "XDG_CONFIG_HOME".into(),
        dir.join("cfg").display().to_string(),
    );
    Env(m)
}

fn cli(args: &[&str]) -> Cli {
    Cli::try_parse_from(std::iter::once("flower-tui").chain(args.iter().copied())).unwrap()
}

#[test]
fn flags_beat_env_beat_file() {
    let dir = tempfile::tempdir().unwrap();
    let e = env(
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-1"),
            ("ANTHROPIC_MODEL", "claude-haiku-4-5"),
        ],
        dir.path(),
    );
    let file = FileConfig {
        model: Some("from-file".into()),
        window: Some(123_000),
        base_url: Some("http://file".into()),
        ..Default::default()
    };
    let ws = dir.path().display().to_string();
    let c = resolve(cli(&["-p", "x", "--workspace", &ws]), &e, file.clone()).unwrap();
    assert_eq!(c.model, "claude-haiku-4-5", "env beats file");
    assert_eq!(c.window, 123_000);
    assert_eq!(c.base_url, "http://file");
    let no_env = env(&[("ANTHROPIC_API_KEY", "sk-ant-1")], dir.path());
    let c = resolve(cli(&["-p", "x", "--workspace", &ws]), &no_env, file.clone()).unwrap();
    assert_eq!(c.model, "from-file", "the file when the env says nothing");
    let e2 = env(
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-1"),
            ("ANTHROPIC_BASE_URL", "http://env"),
        ],
        dir.path(),
    );
    let c = resolve(
        cli(&[
            "-p",
            "x",
            "--workspace",
            &ws,
            "--model",
            "flag-model",
            "--window",
            "200k",
        ]),
        &e2,
        file,
    )
    .unwrap();
    assert_eq!(c.model, "flag-model");
    assert_eq!(c.window, 200_000);
    assert_eq!(c.base_url, "http://env", "env beats file");
    assert_eq!(c.thresholds().at, 150_000);
}

#[test]
fn window_from_the_model_name_and_learned_windows() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    let e = env(
        &[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_MODEL", "claude-haiku-4-5"),
        ],
        dir.path(),
    );
    let c = resolve(
        cli(&["-p", "x", "--workspace", &ws]),
        &e,
        FileConfig::default(),
    )
    .unwrap();
    assert_eq!(c.window, 200_000);
    let data = data_dir(&e);
    LearnedWindows::in_data_dir(&data)
        .record("claude-haiku-4-5", 180_000)
        .unwrap();
    let c = resolve(
        cli(&["-p", "x", "--workspace", &ws]),
        &e,
        FileConfig::default(),
    )
    .unwrap();
    assert_eq!(c.window, 180_000);
    assert_eq!(c.window_source, WindowSource::Learned);
    let c = resolve(
        cli(&["-p", "x", "--workspace", &ws, "--window", "1m"]),
        &e,
        FileConfig::default(),
    )
    .unwrap();
    assert_eq!(c.window, 1_000_000);
}

#[test]
fn no_key_means_demo_in_the_tui_and_an_error_headless() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    let e = env(&[], dir.path());
    let c = resolve(cli(&["--workspace", &ws]), &e, FileConfig::default()).unwrap();
    assert!(c.backend.is_demo());
    assert_eq!((c.window, c.headroom), (DEMO_WINDOW, DEMO_HEADROOM));
    let err = resolve(
        cli(&["-p", "x", "--workspace", &ws]),
        &e,
        FileConfig::default(),
    )
    .unwrap_err();
    assert!(
        err.0.contains("ANTHROPIC_API_KEY") && err.0.contains("--demo"),
        "{err}"
    );
    let c = resolve(
        cli(&["-p", "x", "--demo", "--workspace", &ws]),
        &e,
        FileConfig::default(),
    )
    .unwrap();
    assert!(c.backend.is_demo() && c.api_key.is_none());
}

#[test]
fn a_local_openai_compatible_server_needs_no_key() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    let e = env(
        &[("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")],
        dir.path(),
    );
    let c = resolve(
        cli(&[
            "-p",
            "x",
            "--provider",
            "openai",
            "--model",
            "llama3",
            "--workspace",
            &ws,
        ]),
        &e,
        FileConfig::default(),
    )
    .unwrap();
    assert_eq!(c.backend, Backend::Api(ProviderKind::OpenAi));
    assert!(c.api_key.is_none());
    assert_eq!(c.base_url, "http://127.0.0.1:11434/v1");
    // Without a base URL of its own it is api.openai.com, which needs the key.
    let e = env(&[], dir.path());
    let err = resolve(
        cli(&["-p", "x", "--provider", "openai", "--workspace", &ws]),
        &e,
        FileConfig::default(),
    )
    .unwrap_err();
    assert!(err.0.contains("OPENAI_API_KEY"), "{err}");
}

#[test]
fn values_parse_and_mask() {
    assert_eq!(parse_tokens("200k"), Ok(200_000));
    assert_eq!(parse_tokens("1M"), Ok(1_000_000));
    assert_eq!(parse_tokens("1_000"), Ok(1_000));
    assert!(parse_tokens("-3").is_err());
    assert!(parse_tokens("0.4").is_err(), "rounds to zero");
    assert_eq!(parse_review("off"), Ok(Review::Off));
    assert_eq!(parse_review("15"), Ok(Review::Secs(15)));
    assert!(parse_review("soon").is_err());
    assert_eq!(mask_key(Some("sk-ant-secret")), "sk-a****");
    assert_eq!(mask_key(None), "(none)");
    let c = Config {
        api_key: Some(ApiKey::new("sk-ant-secret")),
        ..sample()
    };
    let report = c.verbose_report();
    assert!(report.contains("sk-a****") && !report.contains("secret"));
}

#[test]
fn bad_file_values_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    let e = env(&[("ANTHROPIC_API_KEY", "k")], dir.path());
    let file = FileConfig {
        review: Some(toml::Value::Boolean(true)),
        ..Default::default()
    };
    let err = resolve(cli(&["-p", "x", "--workspace", &ws]), &e, file).unwrap_err();
    assert!(err.0.contains("`review`"), "{err}");
    let file = FileConfig {
        provider: Some("gemini".into()),
        ..Default::default()
    };
    let err = resolve(cli(&["-p", "x", "--workspace", &ws]), &e, file).unwrap_err();
    assert!(
        err.0.contains("`provider`") && err.0.contains("anthropic, openai"),
        "{err}"
    );
    let file = FileConfig {
        notify: Some("loud".into()),
        ..Default::default()
    };
    let err = resolve(cli(&["-p", "x", "--workspace", &ws]), &e, file).unwrap_err();
    assert!(
        err.0.contains("`notify`") && err.0.contains("bell, osc9, osc777, off"),
        "{err}"
    );
    let file = FileConfig {
        notify: Some("osc777".into()),
        history: Some(false),
        ..Default::default()
    };
    let c = resolve(cli(&["-p", "x", "--workspace", &ws]), &e, file).unwrap();
    assert_eq!((c.notify, c.history), (Notify::Osc777, false));
    let path = dir.path().join("c.toml");
    std::fs::write(&path, "max_generations = \"many\"\n").unwrap();
    let err = load_file(&path).unwrap_err();
    assert!(err.0.contains("max_generations"), "{err}");
    for (file, key) in [
        (
            FileConfig {
                subagent_max_iterations: Some(0),
                ..Default::default()
            },
            "`subagent_max_iterations`",
        ),
        (
            FileConfig {
                subagent_model: Some("  ".into()),
                ..Default::default()
            },
            "`subagent_model`",
        ),
    ] {
        let err = resolve(cli(&["-p", "x", "--workspace", &ws]), &e, file).unwrap_err();
        assert!(err.0.contains(key), "{err}");
    }
}

#[test]
fn subagent_keys_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    let e = env(&[("ANTHROPIC_API_KEY", "k")], dir.path());
    let c = resolve(
        cli(&["-p", "x", "--workspace", &ws]),
        &e,
        FileConfig::default(),
    )
    .unwrap();
    assert_eq!(c.subagent_model, None);
    assert_eq!(
        c.subagent_max_iterations,
        crate::engine::subagent::DEFAULT_MAX_ITERATIONS
    );
    let path = dir.path().join("c.toml");
    std::fs::write(
        &path,
        "subagent_model = \"claude-haiku-4-5\"\nsubagent_max_iterations = 12\n",
    )
    .unwrap();
    let file = load_file(&path).unwrap();
    let c = resolve(cli(&["-p", "x", "--workspace", &ws]), &e, file).unwrap();
    assert_eq!(c.subagent_model.as_deref(), Some("claude-haiku-4-5"));
    assert_eq!(c.subagent_max_iterations, 12);
}

#[test]
fn the_handoff_mode_from_flag_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    let e = env(&[("ANTHROPIC_API_KEY", "k")], dir.path());
    let args = ["-p", "x", "--workspace", &ws];
    let mode = |extra: &[&str], file: FileConfig| {
        let all: Vec<&str> = args.iter().chain(extra).copied().collect();
        resolve(cli(&all), &e, file).map(|c| c.handoff_mode)
    };
    let blocking = || FileConfig {
        handoff_mode: Some("Blocking".into()),
        ..Default::default()
    };
    assert_eq!(mode(&[], blocking()), Ok(HandoffMode::Blocking));
    assert_eq!(
        mode(&["--handoff-mode", "background"], blocking()),
        Ok(HandoffMode::Background),
        "the flag beats the file"
    );
    let bad = FileConfig {
        handoff_mode: Some("lazy".into()),
        ..Default::default()
    };
    let err = mode(&[], bad).unwrap_err();
    assert!(
        err.0.contains("`handoff_mode`") && err.0.contains("background, blocking"),
        "{err}"
    );
    let flag = Cli::try_parse_from(["flower-tui", "--handoff-mode", "eager"]).unwrap_err();
    assert!(flag.to_string().contains("background, blocking"), "{flag}");
}

fn sample() -> Config {
    Config {
        prompt: None,
        backend: Backend::Api(ProviderKind::Anthropic),
        model: "m".into(),
        base_url: "http://x".into(),
        api_key: None,
        window: 200_000,
        window_source: WindowSource::Flag,
        headroom: 50_000,
        lean: false,
        context: ContextPolicy::Handoff,
        max_generations: 8,
        max_iterations: 200,
        continue_last: false,
        workspace: PathBuf::from("/w"),
        run_dir: None,
        data_dir: PathBuf::from("/d"),
        workbench: true,
        review: Some(15),
        step: None,
        approvals: ApprovalPolicy::Ask,
        output: OutputFormat::Json,
        verbose: false,
        handoff_after: None,
        theme: "dark".into(),
        no_color: false,
        editor: None,
        max_tokens: 1024,
        bash_timeout_secs: 120,
        retry_base_ms: 1000,
        stream_idle_timeout_secs: 120,
        log_level: LogLevel::Info,
        notify: Notify::Bell,
        history: true,
        handoff_mode: crate::engine::policy::HandoffMode::Background,
        mcp_servers: Vec::new(),
        mcp_json: McpJsonPolicy::Ask,
        config_dir: None,
        instructions_max_bytes: 32 * 1024,
        resume: None,
        effort: None,
        subagent_model: None,
        subagent_max_iterations: 50,
    }
}

/// The error `text` as the config file yields it.
fn file_error(dir: &Path, text: &str) -> String {
    let path = dir.join("edge.toml");
    std::fs::write(&path, text).unwrap();
    load_file(&path)
        .map(|_| String::new())
        .unwrap_or_else(|e| e.0)
}

#[test]
fn file_edge_cases_name_the_key_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let ok = |text: &str| {
        let path = dir.path().join("ok.toml");
        std::fs::write(&path, text).unwrap();
        load_file(&path).unwrap()
    };
    // As the flag takes it.
    assert_eq!(ok("window = \"200k\"\n").window, Some(200_000));
    assert_eq!(ok("headroom = \"20_000\"\n").headroom, Some(20_000));
    assert_eq!(ok("window = 1000000\n").window, Some(1_000_000));
    // (text, what the one line must hold)
    let table: [(&str, &[&str]); 6] = [
        ("[window]\nsize = 3\n", &["`window`", "table", "window = "]),
        ("[[window]]\n", &["`window`", "table"]),
        ("window = \"big\"\n", &["`window`", "200k", "big"]),
        ("window = 0\n", &["`window`", "positive token count"]),
        ("headroom = true\n", &["`headroom`", "boolean"]),
        ("model = { name = \"x\" }\n", &["`model`"]),
    ];
    for (text, want) in table {
        let err = file_error(dir.path(), text);
        assert!(!err.is_empty(), "{text:?} was accepted");
        assert_eq!(err.lines().count(), 1, "{err}");
        for w in want {
            assert!(err.contains(w), "{text:?}: {w:?} missing from {err}");
        }
    }
}

#[test]
fn checked_values_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    let e = env(&[("ANTHROPIC_API_KEY", "sk-ant-k")], dir.path());
    let run = |file: FileConfig, e: &Env| resolve(cli(&["-p", "x", "--workspace", &ws]), e, file);
    let err = run(
        FileConfig {
            max_tokens: Some(0),
            ..Default::default()
        },
        &e,
    )
    .unwrap_err();
    assert!(
        err.0.contains("`max_tokens`") && err.0.contains("≥ 1"),
        "{err}"
    );
    for bad in ["localhost:8080", "ftp://host/x", "/v1", "http://"] {
        let err = run(
            FileConfig {
                base_url: Some(bad.into()),
                ..Default::default()
            },
            &e,
        )
        .unwrap_err();
        assert!(
            err.0.contains("`base_url`") && err.0.contains("http(s)") && err.0.contains(bad),
            "{bad}: {err}"
        );
    }
    for good in ["http://127.0.0.1:8080", "https://api.example.com/v1"] {
        let c = run(
            FileConfig {
                base_url: Some(good.into()),
                ..Default::default()
            },
            &e,
        )
        .unwrap();
        assert_eq!(c.base_url, good);
    }
    let bad_env = env(
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-k"),
            ("ANTHROPIC_BASE_URL", "api.anthropic.com"),
        ],
        dir.path(),
    );
    let err = run(FileConfig::default(), &bad_env).unwrap_err();
    assert!(err.0.starts_with("ANTHROPIC_BASE_URL: "), "{err}");
}

#[test]
fn negative_flag_values_name_the_flag_and_the_accepted_values() {
    for (flag, want) in [
        ("--review", "a number of seconds or off"),
        ("--window", "positive token count"),
        ("--max-generations", "1.."),
    ] {
        let err = Cli::try_parse_from(["flower-tui", flag, "-3"]).unwrap_err();
        let (line, code) = LoadError::Clap(err).report();
        assert_eq!(code, 2, "{line}");
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(
            line.contains(flag) && line.contains("-3") && line.contains(want),
            "{flag}: {line}"
        );
    }
}

#[test]
fn a_dot_flower_file_and_a_run_dir_file_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join(".flower"), "not a dir").unwrap();
    let e = env(&[("ANTHROPIC_API_KEY", "sk-ant-k")], dir.path());
    let ws_arg = ws.display().to_string();
    let err = resolve(
        cli(&["-p", "x", "--workspace", &ws_arg]),
        &e,
        FileConfig::default(),
    )
    .unwrap_err();
    assert!(
        err.0.contains(".flower is a file, not a directory") && err.0.contains("--no-workbench"),
        "{err}"
    );
    // Without the workbench it is not in the way.
    let c = resolve(
        cli(&["-p", "x", "--workspace", &ws_arg, "--no-workbench"]),
        &e,
        FileConfig::default(),
    )
    .unwrap();
    assert!(c.workbench_dir().is_none());
    let file = dir.path().join("run-file");
    std::fs::write(&file, "x").unwrap();
    let run_arg = file.display().to_string();
    let err = resolve(
        cli(&[
            "-p",
            "x",
            "--workspace",
            &ws_arg,
            "--no-workbench",
            "--run-dir",
            &run_arg,
        ]),
        &e,
        FileConfig::default(),
    )
    .unwrap_err();
    assert_eq!(err.0, format!("--run-dir {run_arg}: not a directory"));
}

#[test]
fn a_small_window_scales_the_line_and_gets_the_lean_prompt() {
    let c = Config {
        window: 8_000,
        max_tokens: 16_384,
        ..sample()
    };
    // The line leaves the writing request's output cap (a quarter of the window) free.
    assert_eq!((c.thresholds().at, c.thresholds().warn_at), (5_000, 4_000));
    let report = c.verbose_report();
    assert!(
        report.contains("\nat: 5000\n") && report.contains("\nprompt: lean"),
        "{report}"
    );
    assert!(sample().verbose_report().contains("\nprompt: full"));
    let asked = Config {
        lean: true,
        ..sample()
    };
    assert!(asked.verbose_report().contains("\nprompt: lean"));
    // A small output cap needs little room: the seed's line holds in the demo's window.
    let demo = Config {
        window: 40_000,
        headroom: 10_000,
        max_tokens: 4_096,
        ..sample()
    };
    assert_eq!(demo.thresholds().at, 30_000);
}

#[test]
fn mcp_servers_and_the_mcp_json_policy_from_the_file_and_flags() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    let e = env(
        &[("ANTHROPIC_API_KEY", "k"), ("GH_TOKEN", "ghp_1")],
        dir.path(),
    );
    let path = dir.path().join("c.toml");
    std::fs::write(
        &path,
        r#"
        mcp_json = "trust"
        [mcp_servers.github]
        command = "npx"
        args = ["-y", "@modelcontextprotocol/server-github"]
        env = { GITHUB_TOKEN = "${GH_TOKEN}" }
        [mcp_servers.docs]
        url = "https://example.com/mcp"
        "#,
    )
    .unwrap();
    let file = load_file(&path).unwrap();
    let c = resolve(cli(&["-p", "x", "--workspace", &ws]), &e, file.clone()).unwrap();
    let names: Vec<&str> = c.mcp_servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["docs", "github"]);
    assert_eq!(c.mcp_json, McpJsonPolicy::Trust);
    let c = resolve(
        cli(&["-p", "x", "--workspace", &ws, "--mcp-json", "ignore"]),
        &e,
        file,
    )
    .unwrap();
    assert_eq!(c.mcp_json, McpJsonPolicy::Ignore, "the flag wins");
    assert_eq!(sample().mcp_json, McpJsonPolicy::Ask);

    std::fs::write(&path, "[mcp_servers.bad]\ncommand = 3\n").unwrap();
    let err = resolve(
        cli(&["-p", "x", "--workspace", &ws]),
        &e,
        load_file(&path).unwrap(),
    )
    .unwrap_err();
    assert_eq!(
        err.0,
        "config key `mcp_servers.bad.command`: expected a string (got a number)"
    );
    std::fs::write(&path, "mcp_json = \"always\"\n").unwrap();
    let err = resolve(
        cli(&["-p", "x", "--workspace", &ws]),
        &e,
        load_file(&path).unwrap(),
    )
    .unwrap_err();
    assert_eq!(
        err.0,
        "config key `mcp_json`: accepted values: ask, trust, ignore (got always)"
    );
    assert!(Cli::try_parse_from(["flower-tui", "--mcp-json", "maybe"]).is_err());
}
