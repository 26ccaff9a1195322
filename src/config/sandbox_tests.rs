//! The sandbox's settings: defaults, flags over the file, the word and table forms, bad values.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Parser;

use super::*;
use crate::config::cli::Cli;
use crate::config::file;

fn env() -> Env {
    Env(BTreeMap::from([(
        "HOME".to_string(),
        "/home/ann".to_string(),
    )]))
}

/// The settings for `args` and a config file holding `text`.
fn settings(args: &[&str], text: &str) -> Result<SandboxSettings, String> {
    let cli = Cli::try_parse_from(std::iter::once("flower-tui").chain(args.iter().copied()))
        .map_err(|e| e.to_string())?;
    let keys = file::parse(Path::new("c.toml"), text)
        .map_err(|e| e.to_string())?
        .sandbox;
    resolve(cli.sandbox, keys, &env()).map_err(|e| e.to_string())
}

#[test]
fn the_default_is_workspace_write_without_network_and_confined_commands_run_unasked() {
    assert_eq!(
        settings(&[], ""),
        Ok(SandboxSettings {
            policy: SandboxPolicy::new(SandboxMode::WorkspaceWrite),
            approval: SandboxApproval::Skip,
        })
    );
}

#[test]
fn the_flags_beat_the_file() {
    let text = "sandbox = \"read-only\"\nsandbox_network = \"on\"\n";
    let file_only = settings(&[], text).unwrap().policy;
    assert_eq!(file_only.mode, SandboxMode::ReadOnly);
    assert_eq!(file_only.network, NetworkAccess::Allowed);
    let flagged = settings(&["--sandbox", "off", "--sandbox-network", "off"], text)
        .unwrap()
        .policy;
    assert_eq!(flagged.mode, SandboxMode::Off);
    assert_eq!(flagged.network, NetworkAccess::Blocked);
}

#[test]
fn the_table_sets_the_mode_the_writable_paths_and_asking() {
    let text = "[sandbox]\nmode = \"read-only\"\nwritable = [\"~/.cache/pip\", \"/opt/build\"]\n\
                ask = true\n";
    let s = settings(&[], text).unwrap();
    assert_eq!(s.policy.mode, SandboxMode::ReadOnly);
    assert_eq!(
        s.policy.writable,
        [
            PathBuf::from("/home/ann/.cache/pip"),
            PathBuf::from("/opt/build")
        ]
    );
    assert_eq!(s.approval, SandboxApproval::Ask);
    let flagged = settings(&["--sandbox", "workspace-write"], text).unwrap();
    assert_eq!(flagged.policy.mode, SandboxMode::WorkspaceWrite);
    assert_eq!(
        flagged.policy.writable.len(),
        2,
        "the flag changes the mode only"
    );
}

#[test]
fn bad_values_name_the_key_and_the_accepted_ones() {
    assert_eq!(
        settings(&[], "sandbox = \"strict\"\n"),
        Err(
            "config key `sandbox`: accepted values: workspace-write, read-only, off (got \
             strict)"
                .into()
        )
    );
    assert_eq!(
        settings(&[], "[sandbox]\nmode = \"on\"\n"),
        Err(
            "config key `sandbox.mode`: accepted values: workspace-write, read-only, off (got \
             on)"
            .into()
        )
    );
    assert_eq!(
        settings(&[], "sandbox_network = \"yes\"\n"),
        Err("config key `sandbox_network`: accepted values: on, off (got yes)".into())
    );
    assert_eq!(
        settings(&[], "[sandbox]\nwritable = [\"build/out\"]\n"),
        Err(
            "config key `sandbox.writable`: accepted values: absolute paths, or paths starting \
             with ~/ (got \"build/out\")"
                .into()
        )
    );
    let unknown = settings(&[], "[sandbox]\nnetwork = \"on\"\n").unwrap_err();
    assert!(
        unknown.starts_with("config c.toml: ")
            && unknown.contains("[sandbox]: unknown field `network`"),
        "{unknown}"
    );
    let number = settings(&[], "sandbox = 3\n").unwrap_err();
    assert!(
        number.contains("expected a mode (workspace-write, read-only, off) or a [sandbox] table"),
        "{number}"
    );
    let flag = settings(&["--sandbox", "strict"], "").unwrap_err();
    assert!(
        flag.contains("accepted values: workspace-write, read-only, off (got 'strict')"),
        "{flag}"
    );
}
