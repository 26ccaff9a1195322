//! The step's memory in the TUI (issue 11): `/pin`, `/pins`, `/focus` (part of the pure reducer),
//! and the engine's answers. The engine owns the memory; the state keeps a mirror of what it last
//! said ([`MemoryView`]), which `/pins`, the plan above the input and the editor title read.

use crate::engine::protocol::{Event, MemoryRefusal, Op, PinChange, PinRef, TodoItem};

use super::msg::Effect;
use super::state::AppState;

/// The step's memory as the engine last reported it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryView {
    /// The pins, oldest first (numbered from 1 by `/pins`).
    pub pins: Vec<String>,
    /// The plan (the `todo` tool's list).
    pub plan: Vec<TodoItem>,
    /// The standing focus.
    pub focus: Option<String>,
}

/// The usage line of `/pins`.
pub const PINS_USAGE: &str = "usage: /pins (list) · /pins rm N (unpin number N) · /pins clear";

/// What `/pins …` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinsCommand {
    /// List the pins.
    List,
    /// Unpin.
    Unpin(PinRef),
}

/// Parse the argument of `/pins`: nothing, `rm N` (also `remove`, `del`, `unpin`), `clear`.
pub fn parse_pins(arg: Option<&str>) -> Result<PinsCommand, String> {
    let words: Vec<&str> = arg.unwrap_or_default().split_whitespace().collect();
    match words.as_slice() {
        [] | ["list"] | ["ls"] => Ok(PinsCommand::List),
        ["clear"] | ["rm", "all"] => Ok(PinsCommand::Unpin(PinRef::All)),
        ["rm" | "remove" | "del" | "delete" | "unpin", n] => {
            match n.trim_start_matches('#').parse::<usize>() {
                Ok(n) if n >= 1 => Ok(PinsCommand::Unpin(PinRef::Number(n))),
                _ => Err(format!("/pins: `{n}` is not a pin number; {PINS_USAGE}")),
            }
        }
        _ => Err(PINS_USAGE.to_string()),
    }
}

/// The `/pins` listing.
pub fn pins_report(view: &MemoryView) -> String {
    if view.pins.is_empty() {
        return "No pins · /pin TEXT pins a line for the rest of the step: every successor reads it verbatim".into();
    }
    let mut lines = vec![format!(
        "Pinned for this step ({}) · /pins rm N unpins one · /pins clear unpins all",
        view.pins.len()
    )];
    for (i, pin) in view.pins.iter().enumerate() {
        let mut rows = pin.lines();
        lines.push(format!("  {}. {}", i + 1, rows.next().unwrap_or_default()));
        for row in rows {
            lines.push(format!("     {row}"));
        }
    }
    lines.join("\n")
}

/// `/pin TEXT`: the engine pins it (or says why not); before the first message it keeps the pin
/// for the step that message starts.
pub(super) fn pin(state: &mut AppState, arg: Option<String>, fx: &mut Vec<Effect>) {
    match arg {
        Some(text) => fx.push(Effect::SendOp(Op::Pin { text })),
        None => state.notice(pins_report(&state.memory)),
    }
}

/// `/pins [rm N | clear]`.
pub(super) fn pins(state: &mut AppState, arg: Option<String>, fx: &mut Vec<Effect>) {
    match parse_pins(arg.as_deref()) {
        Ok(PinsCommand::List) => state.notice(pins_report(&state.memory)),
        Ok(PinsCommand::Unpin(pin)) => fx.push(Effect::SendOp(Op::Unpin { pin })),
        Err(e) => state.error(e),
    }
}

/// `/focus [TEXT]`: set the standing focus, or clear it.
pub(super) fn focus(state: &mut AppState, arg: Option<String>, fx: &mut Vec<Effect>) {
    if arg.is_none() && state.memory.focus.is_none() {
        return state.notice(
            "No standing focus · /focus TEXT sets one: every later handoff of this step keeps it in view",
        );
    }
    fx.push(Effect::SendOp(Op::SetFocus { focus: arg }));
}

/// The engine's memory events.
pub(super) fn on_event(state: &mut AppState, ev: Event) {
    match ev {
        Event::Pins {
            pins,
            change,
            changed,
            step,
        } => {
            let message = pins_message(&pins, change, &changed, step.is_some());
            state.memory.pins = pins;
            state.notice(message);
        }
        Event::Focus { focus, step } => {
            let message = match (&focus, &state.memory.focus) {
                (Some(f), _) => format!(
                    "Standing focus{}: {f} · every later handoff of this step keeps it in view · /focus alone clears it",
                    if step.is_some() {
                        ""
                    } else {
                        " (for the step your first message starts)"
                    }
                ),
                (None, Some(old)) => format!("Standing focus cleared (it was: {old})"),
                (None, None) => "Standing focus cleared".to_string(),
            };
            state.memory.focus = focus;
            state.notice(message);
        }
        Event::Todo { items } => state.memory.plan = items,
        Event::MemoryRefused { reason, message } => match reason {
            MemoryRefusal::AlreadyPinned => state.notice(message),
            _ => state.error(message),
        },
        _ => {}
    }
}

fn pins_message(pins: &[String], change: PinChange, changed: &[String], has_step: bool) -> String {
    let first = |v: &[String]| v.first().cloned().unwrap_or_default();
    match change {
        PinChange::Added => {
            let number = pins
                .iter()
                .position(|p| Some(p) == changed.first())
                .map_or(pins.len(), |i| i + 1);
            let whom = if has_step {
                "for the rest of the step"
            } else {
                "for the step your first message starts"
            };
            format!("Pinned #{number} {whom}: {}", first(changed))
        }
        PinChange::Removed if changed.len() == 1 => format!("Unpinned: {}", first(changed)),
        PinChange::Removed => format!("Unpinned all {} pins", changed.len()),
        PinChange::FromEditor => format!(
            "Pinned from the handoff document ({}): {}",
            changed.len(),
            changed.join(" · ")
        ),
        PinChange::Restored => format!(
            "{} pin{} kept from the earlier session (/pins lists them)",
            pins.len(),
            if pins.len() == 1 { "" } else { "s" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_arguments() {
        assert_eq!(parse_pins(None), Ok(PinsCommand::List));
        assert_eq!(
            parse_pins(Some("rm 2")),
            Ok(PinsCommand::Unpin(PinRef::Number(2)))
        );
        assert_eq!(
            parse_pins(Some("remove #3")),
            Ok(PinsCommand::Unpin(PinRef::Number(3)))
        );
        assert_eq!(
            parse_pins(Some("clear")),
            Ok(PinsCommand::Unpin(PinRef::All))
        );
        assert!(
            parse_pins(Some("rm 0"))
                .unwrap_err()
                .contains("not a pin number")
        );
        assert!(parse_pins(Some("rm x")).unwrap_err().contains("`x`"));
        assert_eq!(parse_pins(Some("what")), Err(PINS_USAGE.to_string()));
    }

    #[test]
    fn listing() {
        let mut v = MemoryView::default();
        assert!(pins_report(&v).starts_with("No pins"));
        v.pins = vec!["never push to main".into(), "two\nlines".into()];
        assert_eq!(
            pins_report(&v),
            "Pinned for this step (2) · /pins rm N unpins one · /pins clear unpins all\n  1. never push to main\n  2. two\n     lines"
        );
    }
}
