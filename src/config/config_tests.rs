//! Unit tests of the configuration: precedence, windows, keys, masking, bad values.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::context::{ContextSettings, DEMO_HEADROOM, DEMO_WINDOW};
use super::env::data_dir;
use super::file::{FileConfig, load_file};
use super::front::FrontSettings;
use super::places::Places;
use super::provider::ProviderSettings;
use super::report::mask_key;
use super::settings::resolve;
use super::tools::ToolSettings;
use super::values::parse_tokens;
use super::*;
use crate::engine::context::WindowSource;
use crate::engine::learned_windows::LearnedWindows;
use crate::engine::mcp::McpJsonPolicy;
use crate::engine::policy::{ApprovalPolicy, ContextPolicy, HandoffMode};
use crate::engine::secrets::ApiKey;
use crate::logging::LogLevel;

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

/// The config file holding `text`.
fn file(text: &str) -> FileConfig {
    file::parse(Path::new("config.toml"), text).unwrap()
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
    let text = "model = \"from-file\"\nwindow = 123000\nbase_url = \"http://file\"\n";
    let ws = dir.path().display().to_string();
    let c = resolve(cli(&["-p", "x", "--workspace", &ws]), &e, file(text)).unwrap();
    assert_eq!(c.provider.model, "claude-haiku-4-5", "env beats file");
    assert_eq!(c.context.window, 123_000);
    assert_eq!(c.provider.base_url, "http://file");
    let no_env = env(&[("ANTHROPIC_API_KEY", "sk-ant-1")], dir.path());
    let c = resolve(cli(&["-p", "x", "--workspace", &ws]), &no_env, file(text)).unwrap();
    assert_eq!(
        c.provider.model, "from-file",
        "the file when the env says nothing"
    );
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
        file(text),
    )
    .unwrap();
    assert_eq!(c.provider.model, "flag-model");
    assert_eq!(c.context.window, 200_000);
    assert_eq!(c.provider.base_url, "http://env", "env beats file");
    assert_eq!(c.context.thresholds().at, 150_000);
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
    assert_eq!(c.context.window, 200_000);
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
    assert_eq!(c.context.window, 180_000);
    assert_eq!(c.context.window_source, WindowSource::Learned);
    let c = resolve(
        cli(&["-p", "x", "--workspace", &ws, "--window", "1m"]),
        &e,
        FileConfig::default(),
    )
    .unwrap();
    assert_eq!(c.context.window, 1_000_000);
}

#[test]
fn no_key_means_demo_in_the_tui_and_an_error_headless() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    let e = env(&[], dir.path());
    let c = resolve(cli(&["--workspace", &ws]), &e, FileConfig::default()).unwrap();
    assert!(c.provider.backend.is_demo());
    assert_eq!(
        (c.context.window, c.context.headroom),
        (DEMO_WINDOW, DEMO_HEADROOM)
    );
    let err = resolve(
        cli(&["-p", "x", "--workspace", &ws]),
        &e,
        FileConfig::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("ANTHROPIC_API_KEY") && err.contains("--demo"),
        "{err}"
    );
    let c = resolve(
        cli(&["-p", "x", "--demo", "--workspace", &ws]),
        &e,
        FileConfig::default(),
    )
    .unwrap();
    assert!(c.provider.backend.is_demo() && c.provider.api_key.is_none());
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
    assert_eq!(c.provider.backend, Backend::Api(ProviderKind::OpenAi));
    assert!(c.provider.api_key.is_none());
    assert_eq!(c.provider.base_url, "http://127.0.0.1:11434/v1");
    // Without a base URL of its own it is api.openai.com, which needs the key.
    let e = env(&[], dir.path());
    let err = resolve(
        cli(&["-p", "x", "--provider", "openai", "--workspace", &ws]),
        &e,
        FileConfig::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("OPENAI_API_KEY"), "{err}");
}

#[test]
fn values_parse_and_mask() {
    use super::values::{Choice, FlagValueError};
    assert_eq!(parse_tokens("200k"), Ok(200_000));
    assert_eq!(parse_tokens("1M"), Ok(1_000_000));
    assert_eq!(parse_tokens("1_000"), Ok(1_000));
    assert!(parse_tokens("-3").is_err());
    assert!(parse_tokens("0.4").is_err(), "rounds to zero");
    assert_eq!(
        parse_tokens("big"),
        Err(FlagValueError::Tokens { got: "big".into() })
    );
    assert_eq!(Review::from_word("off"), Some(Review::Off));
    assert_eq!(Review::from_word("15"), Some(Review::Secs(15)));
    assert!(Review::from_word("soon").is_none());
    assert_eq!(mask_key(Some("sk-ant-secret")), "sk-a****");
    assert_eq!(mask_key(None), "(none)");
    let mut c = sample();
    c.provider.api_key = Some(ApiKey::new("sk-ant-secret"));
    let report = c.verbose_report();
    assert!(report.contains("sk-a****") && !report.contains("secret"));
}

#[test]
fn bad_file_values_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    let e = env(&[("ANTHROPIC_API_KEY", "k")], dir.path());
    let run = |text: &str| resolve(cli(&["-p", "x", "--workspace", &ws]), &e, file(text));
    let err = run("review = true\n").unwrap_err().to_string();
    assert!(err.contains("`review`"), "{err}");
    let err = run("provider = \"gemini\"\n").unwrap_err().to_string();
    assert!(
        err.contains("`provider`") && err.contains("anthropic, openai"),
        "{err}"
    );
    let err = run("notify = \"loud\"\n").unwrap_err().to_string();
    assert!(
        err.contains("`notify`") && err.contains("bell, osc9, osc777, off"),
        "{err}"
    );
    let c = run("notify = \"osc777\"\nhistory = false\nmouse_capture = true\n").unwrap();
    assert_eq!((c.front.notify, c.front.history), (Notify::Osc777, false));
    assert!(c.front.mouse_capture);
    let path = dir.path().join("c.toml");
    std::fs::write(&path, "max_generations = \"many\"\n").unwrap();
    let err = load_file(&path).unwrap_err().to_string();
    assert!(err.contains("max_generations"), "{err}");
    for (text, key) in [
        ("subagent_max_iterations = 0\n", "`subagent_max_iterations`"),
        ("subagent_model = \"  \"\n", "`subagent_model`"),
    ] {
        let err = run(text).unwrap_err().to_string();
        assert!(err.contains(key), "{err}");
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
    assert_eq!(c.tools.subagent_model, None);
    assert_eq!(
        c.tools.subagent_max_iterations,
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
    assert_eq!(c.tools.subagent_model.as_deref(), Some("claude-haiku-4-5"));
    assert_eq!(c.tools.subagent_max_iterations, 12);
}

#[test]
fn the_handoff_mode_from_flag_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    let e = env(&[("ANTHROPIC_API_KEY", "k")], dir.path());
    let args = ["-p", "x", "--workspace", &ws];
    let mode = |extra: &[&str], text: &str| {
        let all: Vec<&str> = args.iter().chain(extra).copied().collect();
        resolve(cli(&all), &e, file(text))
            .map(|c| c.context.handoff_mode)
            .map_err(|e| e.to_string())
    };
    let blocking = "handoff_mode = \"Blocking\"\n";
    assert_eq!(mode(&[], blocking), Ok(HandoffMode::Blocking));
    assert_eq!(
        mode(&["--handoff-mode", "background"], blocking),
        Ok(HandoffMode::Background),
        "the flag beats the file"
    );
    let err = mode(&[], "handoff_mode = \"lazy\"\n").unwrap_err();
    assert!(
        err.contains("`handoff_mode`") && err.contains("background, blocking"),
        "{err}"
    );
    let flag = Cli::try_parse_from(["flower-tui", "--handoff-mode", "eager"]).unwrap_err();
    assert!(flag.to_string().contains("background, blocking"), "{flag}");
}

fn sample() -> Config {
    Config {
        prompt: None,
        acp: false,
        provider: ProviderSettings {
            backend: Backend::Api(ProviderKind::Anthropic),
            model: "m".into(),
            base_url: "http://x".into(),
            api_key: None,
            max_tokens: 1024,
            effort: None,
            retry_base_ms: 1000,
            stream_idle_timeout_secs: 120,
        },
        context: ContextSettings {
            window: 200_000,
            window_source: WindowSource::Flag,
            headroom: 50_000,
            max_tokens: 1024,
            lean: false,
            policy: ContextPolicy::Handoff,
            max_generations: 8,
            handoff_mode: HandoffMode::Background,
            review: Review::Secs(15),
            handoff_after: None,
            instructions_max_bytes: 32 * 1024,
            masking: crate::engine::mask::MaskSettings::default(),
        },
        places: Places {
            workspace: PathBuf::from("/w"),
            workbench: true,
            checkpoints: crate::engine::policy::CheckpointPolicy::On,
            run_dir: None,
            step: None,
            data_dir: PathBuf::from("/d"),
            config_dir: None,
            session: SessionChoice::New,
        },
        tools: ToolSettings {
            approvals: ApprovalPolicy::Ask,
            max_iterations: 200,
            bash_timeout_secs: 120,
            jobs: crate::engine::jobs::JobLimits::default(),
            mcp_servers: Vec::new(),
            mcp_json: McpJsonPolicy::Ask,
            subagent_model: None,
            subagent_max_iterations: 50,
            mode: None,
        },
        front: FrontSettings {
            output: OutputFormat::Json,
            verbose: false,
            theme: "dark".into(),
            no_color: false,
            editor: None,
            log_level: LogLevel::Info,
            notify: Notify::Bell,
            history: true,
            mouse_capture: false,
        },
        sandbox: super::sandbox::SandboxSettings {
            policy: crate::engine::tools::sandbox::SandboxPolicy::default(),
            approval: crate::engine::policy::SandboxApproval::Skip,
        },
        web: Default::default(),
        hooks: Default::default(),
        lsp: super::lsp::LspSettings {
            off: false,
            servers: crate::engine::lsp::spec::builtins(),
        },
    }
}

/// The error `text` as the config file yields it.
fn file_error(dir: &Path, text: &str) -> String {
    let path = dir.join("edge.toml");
    std::fs::write(&path, text).unwrap();
    load_file(&path)
        .map(|_| String::new())
        .unwrap_or_else(|e| e.to_string())
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
    assert_eq!(ok("window = \"200k\"\n").context.window, Some(200_000));
    assert_eq!(ok("headroom = \"20_000\"\n").context.headroom, Some(20_000));
    assert_eq!(ok("window = 1000000\n").context.window, Some(1_000_000));
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
    let run = |text: &str, e: &Env| resolve(cli(&["-p", "x", "--workspace", &ws]), e, file(text));
    let err = run("max_tokens = 0\n", &e).unwrap_err().to_string();
    assert!(err.contains("`max_tokens`") && err.contains("≥ 1"), "{err}");
    for bad in ["localhost:8080", "ftp://host/x", "/v1", "http://"] {
        let err = run(&format!("base_url = \"{bad}\"\n"), &e)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`base_url`") && err.contains("http(s)") && err.contains(bad),
            "{bad}: {err}"
        );
    }
    for good in ["http://127.0.0.1:8080", "https://api.example.com/v1"] {
        let c = run(&format!("base_url = \"{good}\"\n"), &e).unwrap();
        assert_eq!(c.provider.base_url, good);
    }
    let bad_env = env(
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-k"),
            ("ANTHROPIC_BASE_URL", "api.anthropic.com"),
        ],
        dir.path(),
    );
    let err = run("", &bad_env).unwrap_err().to_string();
    assert!(err.starts_with("ANTHROPIC_BASE_URL: "), "{err}");
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
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(".flower is a file, not a directory") && err.contains("--no-workbench"),
        "{err}"
    );
    // Without the workbench it is not in the way.
    let c = resolve(
        cli(&["-p", "x", "--workspace", &ws_arg, "--no-workbench"]),
        &e,
        FileConfig::default(),
    )
    .unwrap();
    assert!(c.places.workbench_dir().is_none());
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
    assert_eq!(
        err.to_string(),
        format!("--run-dir {run_arg}: not a directory")
    );
}

#[test]
fn a_small_window_scales_the_line_and_gets_the_lean_prompt() {
    let mut c = sample();
    c.context.window = 8_000;
    c.context.max_tokens = 16_384;
    // The line leaves the writing request's output cap (a quarter of the window) free.
    let t = c.context.thresholds();
    assert_eq!((t.at, t.warn_at), (5_000, 4_000));
    let report = c.verbose_report();
    assert!(
        report.contains("\nat: 5000\n") && report.contains("\nprompt: lean"),
        "{report}"
    );
    assert!(sample().verbose_report().contains("\nprompt: full"));
    let mut asked = sample();
    asked.context.lean = true;
    assert!(asked.verbose_report().contains("\nprompt: lean"));
    // A small output cap needs little room: the seed's line holds in the demo's window.
    let mut demo = sample();
    demo.context.window = 40_000;
    demo.context.headroom = 10_000;
    demo.context.max_tokens = 4_096;
    assert_eq!(demo.context.thresholds().at, 30_000);
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
    let names: Vec<&str> = c
        .tools
        .mcp_servers
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["docs", "github"]);
    assert_eq!(c.tools.mcp_json, McpJsonPolicy::Trust);
    let c = resolve(
        cli(&["-p", "x", "--workspace", &ws, "--mcp-json", "ignore"]),
        &e,
        file,
    )
    .unwrap();
    assert_eq!(c.tools.mcp_json, McpJsonPolicy::Ignore, "the flag wins");
    assert_eq!(sample().tools.mcp_json, McpJsonPolicy::Ask);

    std::fs::write(&path, "[mcp_servers.bad]\ncommand = 3\n").unwrap();
    let err = resolve(
        cli(&["-p", "x", "--workspace", &ws]),
        &e,
        load_file(&path).unwrap(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
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
        err.to_string(),
        "config key `mcp_json`: accepted values: ask, trust, ignore (got always)"
    );
    assert!(Cli::try_parse_from(["flower-tui", "--mcp-json", "maybe"]).is_err());
}

#[test]
fn every_accepted_word_is_read_by_flag_and_file() {
    use super::values::{Choice, flag};
    fn words<T: Choice + std::fmt::Debug>() {
        for w in T::ACCEPTED.split(", ") {
            assert!(flag::<T>(w).is_ok(), "{w} is listed but not read");
        }
        let err = flag::<T>("nonsense").unwrap_err().to_string();
        assert_eq!(
            err,
            format!("accepted values: {} (got 'nonsense')", T::ACCEPTED)
        );
    }
    words::<ProviderKind>();
    words::<OutputFormat>();
    words::<Notify>();
    words::<LogLevel>();
    words::<HandoffMode>();
    words::<McpJsonPolicy>();
    words::<crate::engine::mask::MaskMode>();
    // A file value is read by the same words.
    let c = file("provider = \"openai\"\noutput = \"text\"\nlog_level = \"debug\"\n");
    assert_eq!(
        c.provider.provider,
        Some(values::FileWord::Valid(ProviderKind::OpenAi))
    );
}
