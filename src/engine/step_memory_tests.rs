//! The step's memory: pins added, removed, refused and masked, the focus, the block a document
//! carries, pins typed into a document, the plan's statuses, and what the ledger keeps.

use super::*;

const T: &str = "2026-11-29T13:40:00Z";

fn pinned(texts: &[&str]) -> StepMemory {
    let mut m = StepMemory::default();
    for t in texts {
        m.add_pin(t, PinSource::Command, T).unwrap();
    }
    m
}

#[test]
fn a_pin_is_kept_verbatim_between_trimmed_ends() {
    let mut m = StepMemory::default();
    m.add_pin("  never  push to `main`\n", PinSource::Command, T)
        .unwrap();
    m.add_pin("two\n  lines", PinSource::Editor, T).unwrap();
    assert_eq!(m.pin_texts(), ["never  push to `main`", "two\n  lines"]);
    assert_eq!(m.pins[1].source, PinSource::Editor);
    assert_eq!(m.pins[0].time, T);
}

#[test]
fn pins_are_refused_with_a_reason() {
    let mut m = pinned(&["a"]);
    let empty = m.add_pin(" \n ", PinSource::Command, T).unwrap_err();
    assert_eq!(empty.reason, MemoryRefusal::EmptyPin);
    let again = m.add_pin("a", PinSource::Command, T).unwrap_err();
    assert_eq!(again.reason, MemoryRefusal::AlreadyPinned);
    assert_eq!(again.message, "Already pinned (#1)");
    // A 1 MB pin: refused, and the message says the cap, the size and what to do instead.
    let big = "x".repeat(1 << 20);
    let r = m.add_pin(&big, PinSource::Command, T).unwrap_err();
    assert_eq!(r.reason, MemoryRefusal::PinTooLong);
    assert!(
        r.message.contains("at most 1,000 characters"),
        "{}",
        r.message
    );
    assert!(r.message.contains("1,048,576"), "{}", r.message);
    assert!(r.message.contains("pin its path"), "{}", r.message);
    // The cap is on characters, not bytes.
    m.add_pin(&"ж".repeat(PIN_MAX_CHARS), PinSource::Command, T)
        .unwrap();
    // Together the pins hold at most PINS_MAX_CHARS.
    let mut full = StepMemory::default();
    for i in 0..8 {
        full.add_pin(
            &format!("{i}{}", "y".repeat(PIN_MAX_CHARS - 1)),
            PinSource::Command,
            T,
        )
        .unwrap();
    }
    let r = full.add_pin("one more", PinSource::Command, T).unwrap_err();
    assert_eq!(r.reason, MemoryRefusal::PinsFull);
    assert!(r.message.contains("8,008 characters"), "{}", r.message);
    assert_eq!(full.pins.len(), 8, "nothing changed");
}

#[test]
fn secrets_in_pins_and_focus_are_masked() {
    let secret = "sk-memory-test-SECRET-5b9e1c";
    crate::engine::secrets::register(secret);
    let mut m = StepMemory::default();
    m.add_pin(&format!("the key is {secret}"), PinSource::Command, T)
        .unwrap();
    m.set_focus(Some(&format!("use {secret}"))).unwrap();
    let json = serde_json::to_string(&m).unwrap();
    assert!(!json.contains(secret), "{json}");
    assert!(m.pins[0].text.starts_with("the key is sk-m****"));
}

#[test]
fn unpinning() {
    let mut m = pinned(&["a", "b", "c"]);
    assert_eq!(m.unpin(PinRef::Number(2)).unwrap(), ["b"]);
    assert_eq!(m.pin_texts(), ["a", "c"]);
    let r = m.unpin(PinRef::Number(3)).unwrap_err();
    assert_eq!(r.reason, MemoryRefusal::NoSuchPin);
    assert_eq!(r.message, "No pin #3: there are 2 pins (/pins lists them)");
    assert!(m.unpin(PinRef::Number(0)).is_err());
    assert_eq!(m.unpin(PinRef::All).unwrap(), ["a", "c"]);
    assert_eq!(
        m.unpin(PinRef::Number(1)).unwrap_err().message,
        "No pin #1: nothing is pinned"
    );
    assert!(m.unpin(PinRef::All).unwrap().is_empty());
}

#[test]
fn focus_is_set_cleared_and_capped() {
    let mut m = StepMemory::default();
    m.set_focus(Some("  the parser bug ")).unwrap();
    assert_eq!(m.focus.as_deref(), Some("the parser bug"));
    m.set_focus(Some("   ")).unwrap();
    assert_eq!(m.focus, None, "blank clears");
    m.set_focus(Some("x")).unwrap();
    m.set_focus(None).unwrap();
    assert_eq!(m.focus, None);
    let r = m
        .set_focus(Some(&"f".repeat(FOCUS_MAX_CHARS + 1)))
        .unwrap_err();
    assert_eq!(r.reason, MemoryRefusal::FocusTooLong);
    assert!(m.is_empty());
}

#[test]
fn the_carried_block_holds_everything_verbatim() {
    assert_eq!(carried_block(&StepMemory::default()), None);
    let mut m = pinned(&["never push to main", "two\nlines"]);
    m.todo = vec![
        TodoItem {
            text: "read the parser".into(),
            status: TodoStatus::Done,
        },
        TodoItem {
            text: "fix `lex()`".into(),
            status: TodoStatus::InProgress,
        },
        TodoItem {
            text: "run the tests".into(),
            status: TodoStatus::Pending,
        },
    ];
    m.focus = Some("the parser bug".into());
    let block = carried_block(&m).unwrap();
    let tail = block.split_once("\n\n## Pinned\n").unwrap().1;
    assert_eq!(
        tail,
        "- never push to main\n- two\n  lines\n\n## Plan\n- [done] read the parser\n- [in progress] fix `lex()`\n- [pending] run the tests\n\n## Focus\nthe parser bug\n"
    );
    assert!(block.starts_with("The harness carries the following"));
    // Only what there is.
    let only_plan = StepMemory {
        todo: m.todo.clone(),
        ..Default::default()
    };
    let b = carried_block(&only_plan).unwrap();
    assert!(b.contains("## Plan") && !b.contains("## Pinned\n") && !b.contains("## Focus\n"));
    // The block's own pins parse back as they are: a successor's copy adds nothing.
    assert_eq!(pinned_in(&block), m.pin_texts());
}

#[test]
fn pinned_sections_parse_in_the_forms_people_type() {
    let text = "# Handoff · step s · generation 1\n\
                ## Doing\nwork\n\
                ## Pinned\n\
                - never push to main\n\
                * keep the API\n\
                1. run `cargo test`\n\
                plain line\n\
                - wrapped item\n  that goes on\n\
                \n\
                (empty)\n\
                ## Next\n- not a pin\n\
                **Pinned:**\n+ bold form\n\
                pinned:\n2) label form\n";
    assert_eq!(
        pinned_in(text),
        [
            "never push to main",
            "keep the API",
            "run `cargo test`",
            "plain line",
            "wrapped item\nthat goes on",
            "bold form",
            "label form",
        ]
    );
    assert!(pinned_in("## Doing\n- x\n## Pinnedness\n- y").is_empty());
    assert!(pinned_in("").is_empty());
}

#[test]
fn typed_pins_are_the_lines_the_frozen_document_did_not_hold() {
    let frozen = "## Doing\nx\n## Scene\n## Pinned\n- copied by the model\n";
    let file = "## Doing\nx\n## Scene\n## Pinned\n- copied by the model\n- typed by the user\n\n## Pinned\n- copied by the model\n";
    assert_eq!(
        typed_pins(file, frozen),
        ["typed by the user", "copied by the model"],
        "a line typed again counts again"
    );
    assert!(typed_pins(frozen, frozen).is_empty());
    assert_eq!(typed_pins("## Pinned\n- a\n", "no pins here"), ["a"]);
}

#[test]
fn statuses_and_numbers() {
    for (s, want) in [
        ("pending", Some(TodoStatus::Pending)),
        ("In Progress", Some(TodoStatus::InProgress)),
        ("in-progress", Some(TodoStatus::InProgress)),
        ("in_progress", Some(TodoStatus::InProgress)),
        ("completed", Some(TodoStatus::Done)),
        ("DONE", Some(TodoStatus::Done)),
        ("maybe", None),
    ] {
        assert_eq!(TodoStatus::parse(s), want, "{s}");
    }
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1_000), "1,000");
    assert_eq!(thousands(1_048_576), "1,048,576");
}

#[test]
fn the_ledger_keeps_it_and_omits_it_when_empty() {
    use crate::engine::ledger::StepRecord;
    let rec = StepRecord::default();
    let json = serde_json::to_string(&rec).unwrap();
    assert!(!json.contains("memory"), "{json}");
    let mut rec = StepRecord {
        memory: pinned(&["a"]),
        ..Default::default()
    };
    rec.memory.focus = Some("f".into());
    rec.memory.todo = vec![TodoItem {
        text: "t".into(),
        status: TodoStatus::InProgress,
    }];
    let json = serde_json::to_string(&rec).unwrap();
    assert!(
        json.contains(r#""memory":{"pins":[{"text":"a","source":"command","time":"2026-11-29T13:40:00Z"}],"todo":[{"text":"t","status":"in_progress"}],"focus":"f"}"#),
        "{json}"
    );
    let back: StepRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(back, rec);
    // An older ledger without the field loads.
    let old: StepRecord = serde_json::from_str(r#"{"name":"s","task":"t","session_id":"x","attempts":0,"retired":[],"context":0,"window":1,"generations":1,"cost_usd":0.0,"num_turns":0,"per_generation":[],"errors":[],"handoffs":[]}"#).unwrap();
    assert!(old.memory.is_empty());
}
