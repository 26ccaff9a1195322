//! The handoff records on disk: typed in memory, readable from older ledgers.

use super::*;
use crate::engine::ledger::Manifest;

/// A step as an older ledger wrote it: one `reason` string per handoff, and the frozen
/// handoff's file as `path` + `written`.
const OLD_MANIFEST: &str = r###"{
  "run_id": "r1",
  "created": "2026-11-01T10:00:00Z",
  "workspace": "/w",
  "provider": "anthropic",
  "model": "claude-test",
  "steps": [{
    "name": "fix-the-build",
    "task": "Fix the build",
    "session_id": "s4",
    "attempts": 0,
    "retired": ["s1", "s2", "s3"],
    "context": 1000,
    "window": 200000,
    "generations": 4,
    "cost_usd": 0.5,
    "num_turns": 7,
    "per_generation": [],
    "errors": [],
    "handoffs": [
      {"path": "/w/.flower/handoff.md", "degraded": false, "reason": "manual",
       "ctx_at_cut": 150000, "time": "t1", "retired_session": "s1", "generation": 2},
      {"path": null, "degraded": false,
       "reason": "context window exceeded: prompt is too long; rescued",
       "ctx_at_cut": 190000, "time": "t2", "retired_session": "s2", "generation": 3,
       "source": "rescued"},
      {"path": null, "degraded": true,
       "reason": "auto, rescued: the writing request overflowed",
       "ctx_at_cut": 170000, "time": "t3", "retired_session": "s3", "generation": 4}
    ],
    "frozen": {
      "path": "/w/.flower/handoff.md", "written": true, "markdown": "## Doing\nx\n",
      "degraded": true, "reason": "network: connection reset", "ctx_at_cut": 160000,
      "time": "t4", "retired_session": "s4", "generation": 5, "request": ["go on"],
      "pid": 42
    }
  }]
}"###;

#[test]
fn an_older_ledger_loads_into_the_typed_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("manifest.json");
    std::fs::write(&path, OLD_MANIFEST).unwrap();
    let m = Manifest::load(&path).unwrap();
    let step = &m.steps[0];
    let causes: Vec<&HandoffReason> = step.handoffs.iter().map(|h| &h.reason).collect();
    assert_eq!(
        causes,
        [
            &HandoffReason::clean(HandoffCause::Manual),
            &HandoffReason::after(
                HandoffCause::Overflow,
                "context window exceeded: prompt is too long"
            ),
            &HandoffReason::after(HandoffCause::Pressure, "the writing request overflowed"),
        ]
    );
    let frozen = step.frozen.as_ref().unwrap();
    assert_eq!(
        frozen.file,
        FrozenFile::OnDisk(PathBuf::from("/w/.flower/handoff.md"))
    );
    assert_eq!(
        frozen.reason,
        HandoffReason::after(HandoffCause::Pressure, "network: connection reset")
    );
    assert_eq!(frozen.request, ["go on"]);
}

#[test]
fn records_round_trip_in_the_new_keys() {
    let frozen = FrozenHandoff {
        file: FrozenFile::InMemory,
        reason: HandoffReason::after(HandoffCause::Overflow, "too long"),
        ..Default::default()
    };
    let json = serde_json::to_value(&frozen).unwrap();
    assert_eq!(json["path"], serde_json::Value::Null);
    assert_eq!(json["written"], true);
    assert_eq!(json["trigger"], "overflow");
    assert_eq!(json["failure"], "too long");
    assert!(json.get("reason").is_none(), "{json}");
    let back: FrozenHandoff = serde_json::from_value(json).unwrap();
    assert_eq!(back, frozen);
    let record = HandoffRecord {
        reason: HandoffReason::clean(HandoffCause::Manual),
        ..Default::default()
    };
    let json = serde_json::to_value(&record).unwrap();
    assert_eq!(json["trigger"], "manual");
    assert!(json.get("failure").is_none(), "{json}");
    let back: HandoffRecord = serde_json::from_value(json).unwrap();
    assert_eq!(back, record);
}

#[test]
fn the_file_states_are_the_two_old_keys() {
    use serde_json::{Value, json};
    let keys = |f: FrozenFile| {
        let v = serde_json::to_value(FrozenHandoff {
            file: f,
            ..Default::default()
        })
        .unwrap();
        (v["path"].clone(), v["written"].clone())
    };
    assert_eq!(keys(FrozenFile::Pending), (Value::Null, json!(false)));
    assert_eq!(keys(FrozenFile::InMemory), (Value::Null, json!(true)));
    assert_eq!(
        keys(FrozenFile::OnDisk(PathBuf::from("/h.md"))),
        (json!("/h.md"), json!(true))
    );
}

#[test]
fn a_ledger_whose_trigger_is_auto_still_reads() {
    // The `trigger` key as ledgers wrote it before the trigger became a `HandoffCause`.
    let json = serde_json::json!({
        "path": null, "degraded": false, "trigger": "auto", "failure": "network: reset",
        "ctx_at_cut": 150000, "time": "t1", "retired_session": "s1", "generation": 2
    });
    let record: HandoffRecord = serde_json::from_value(json).unwrap();
    assert_eq!(
        record.reason,
        HandoffReason::after(HandoffCause::Pressure, "network: reset")
    );
    assert_eq!(record.reason.to_string(), "auto: network: reset");
    let frozen: FrozenHandoff = serde_json::from_value(serde_json::json!({
        "written": true, "markdown": "", "degraded": false, "trigger": "auto",
        "ctx_at_cut": 1, "time": "t", "retired_session": "s", "generation": 1,
        "request": [], "pid": 1, "cause": "pressure"
    }))
    .unwrap();
    assert_eq!(frozen.reason, HandoffReason::clean(HandoffCause::Pressure));
    assert_eq!(frozen.cause, HandoffCause::Pressure);
}
