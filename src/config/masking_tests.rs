//! Unit tests of the masking keys: `mask_tool_results` and `mask_recent_tokens` from the config
//! file to the engine's masking settings, their defaults, and the errors that name them.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::config::env::Env;
use crate::config::file;

/// The masking a config file holding `text` asks for.
fn masking_of(text: &str) -> Result<MaskSettings, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    let keys = file::parse(Path::new("config.toml"), text)?.context;
    let inputs = WindowInputs {
        model: "claude-sonnet-4-5",
        demo: false,
        data_dir: dir.path(),
        max_tokens: crate::engine::context::DEFAULT_OUTPUT_CAP,
    };
    resolve(ContextFlags::default(), keys, &Env(BTreeMap::new()), inputs).map(|c| c.masking)
}

#[test]
fn without_the_keys_masking_is_on_with_the_default_window() {
    assert_eq!(masking_of("").unwrap(), MaskSettings::default());
    assert_eq!(MaskSettings::default().mode, MaskMode::On);
}

#[test]
fn mask_tool_results_off_switches_masking_off_whatever_the_window() {
    assert_eq!(
        masking_of("mask_tool_results = \"off\"\n").unwrap(),
        MaskSettings::OFF
    );
    assert_eq!(
        masking_of("mask_tool_results = \"OFF\"\nmask_recent_tokens = 9000\n").unwrap(),
        MaskSettings::OFF
    );
    assert_eq!(
        masking_of("mask_tool_results = \"on\"\n").unwrap(),
        MaskSettings::default()
    );
}

#[test]
fn mask_recent_tokens_sets_the_window_in_the_forms_of_window() {
    let want = MaskSettings {
        recent_tokens: 8_000,
        ..MaskSettings::default()
    };
    assert_eq!(masking_of("mask_recent_tokens = 8000\n").unwrap(), want);
    assert_eq!(masking_of("mask_recent_tokens = \"8k\"\n").unwrap(), want);
    assert_eq!(
        masking_of("mask_tool_results = \"on\"\nmask_recent_tokens = \"8_000\"\n").unwrap(),
        want
    );
}

#[test]
fn a_wrong_value_names_the_key_and_what_it_takes() {
    let err = masking_of("mask_tool_results = \"sometimes\"\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "config key `mask_tool_results`: accepted values: on, off (got sometimes)"
    );
    let err = masking_of("mask_tool_results = true\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("mask_tool_results"), "{err}");
    let err = masking_of("mask_recent_tokens = 0\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("mask_recent_tokens"), "{err}");
    assert!(err.contains("positive token count"), "{err}");
}
