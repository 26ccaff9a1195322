//! The hooks' verdicts read from their outcome: a call's gate (block, stop, allow, ask, no
//! opinion, with context), a prompt's, a handoff's focus, and the trigger `HandoffFrozen` says.

use std::path::Path;

use super::*;

fn outcome(decision: Decision, context: &[&str], stop: Option<&str>) -> Outcome {
    Outcome {
        decision,
        context: context.iter().map(|c| c.to_string()).collect(),
        stop: stop.map(str::to_string),
        ..Outcome::default()
    }
}

fn block(reason: &str) -> Decision {
    Decision::Block {
        reason: reason.into(),
    }
}

#[test]
fn a_tool_call_gate_for_each_decision() {
    let go = |allow, ask, context: Option<&str>| ToolGate::Go {
        allow,
        ask,
        context: context.map(str::to_string),
    };
    let table = [
        (
            outcome(block("no rm"), &["ignored"], None),
            ToolGate::Blocked("denied by a PreToolUse hook: no rm".into()),
        ),
        (
            outcome(Decision::None, &[], Some("enough")),
            ToolGate::Blocked("stopped by a PreToolUse hook: enough".into()),
        ),
        (
            outcome(Decision::Allow { reason: None }, &[], Some("enough")),
            ToolGate::Blocked("stopped by a PreToolUse hook: enough".into()),
        ),
        (
            outcome(Decision::Allow { reason: None }, &[], None),
            go(true, false, None),
        ),
        (
            outcome(Decision::Ask { reason: None }, &["look twice"], None),
            go(false, true, Some("[PreToolUse hook]\nlook twice")),
        ),
        (outcome(Decision::None, &[], None), go(false, false, None)),
    ];
    for (outcome, want) in table {
        assert_eq!(tool_gate(outcome), want);
    }
}

#[test]
fn a_prompt_is_dropped_by_a_block_or_a_stop_and_otherwise_gets_the_context() {
    assert_eq!(
        prompt_gate(&outcome(block("not now"), &[], Some("later"))),
        Gate::Blocked("not now".into())
    );
    assert_eq!(
        prompt_gate(&outcome(Decision::None, &[], Some("later"))),
        Gate::Blocked("later".into())
    );
    assert_eq!(
        prompt_gate(&outcome(Decision::None, &["a", "b"], None)),
        Gate::Go(Some("[UserPromptSubmit hook]\na\n\nb".into()))
    );
    assert_eq!(
        prompt_gate(&outcome(Decision::None, &[], None)),
        Gate::Go(None)
    );
}

#[test]
fn a_handoff_focus_joins_the_given_one_and_the_hooks_text() {
    let given = || Some("the parser".to_string());
    let none = outcome(Decision::None, &[], None);
    let more = outcome(Decision::None, &["and the tests"], None);
    assert_eq!(handoff_gate(&none, None), Ok(None));
    assert_eq!(handoff_gate(&none, given()), Ok(given()));
    assert_eq!(handoff_gate(&more, None), Ok(Some("and the tests".into())));
    assert_eq!(
        handoff_gate(&more, given()),
        Ok(Some("the parser\nand the tests".into()))
    );
    assert_eq!(
        handoff_gate(&outcome(block("mid-refactor"), &["x"], None), given()),
        Err("mid-refactor".into())
    );
    assert_eq!(
        handoff_gate(&outcome(Decision::None, &[], Some("stop")), given()),
        Err("stop".into())
    );
}

#[test]
fn handoff_frozen_calls_a_plan_and_a_handoff_command_manual() {
    let trigger = |cause| match frozen_input(cause, Path::new("/w/.flower/s.md"), "s".into(), 2) {
        HookInput::HandoffFrozen {
            trigger,
            step,
            generation,
            ..
        } => {
            assert_eq!((step.as_str(), generation), ("s", 2));
            trigger
        }
        other => panic!("not a HandoffFrozen input: {:?}", other.event()),
    };
    assert_eq!(trigger(HandoffCause::Manual), HandoffTrigger::Manual);
    assert_eq!(trigger(HandoffCause::Plan), HandoffTrigger::Manual);
    assert_eq!(trigger(HandoffCause::Pressure), HandoffTrigger::Auto);
    assert_eq!(trigger(HandoffCause::Overflow), HandoffTrigger::Auto);
    assert_eq!(
        pre_handoff_input(true, &None).event(),
        HookEvent::PreHandoff
    );
}
