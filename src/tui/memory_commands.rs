//! The step's memory commands in the reducer: `/pin`, `/pins`, `/focus` (sent to the engine, or
//! answered from the mirror when they only ask), and the engine's memory events (pins changed,
//! focus set or cleared, the plan, a refusal) turned into the mirror and a chat line.

use crate::engine::protocol::{Event, MemoryRefusal, Op, PinChange};

use super::memory_view::{PinsCommand, parse_pins, pins_report};
use super::msg::Effect;
use super::state::AppState;

/// `/pin TEXT`: the engine pins it (or says why not); before the first message it keeps the pin
/// for the step that message starts.
pub(super) fn pin(state: &mut AppState, arg: Option<String>, fx: &mut Vec<Effect>) {
    match arg {
        Some(text) => fx.push(Effect::SendOp(Op::Pin { text })),
        None => state.chat.notice(pins_report(&state.memory)),
    }
}

/// `/pins [rm N | clear]`.
pub(super) fn pins(state: &mut AppState, arg: Option<String>, fx: &mut Vec<Effect>) {
    match parse_pins(arg.as_deref()) {
        Ok(PinsCommand::List) => state.chat.notice(pins_report(&state.memory)),
        Ok(PinsCommand::Unpin(pin)) => fx.push(Effect::SendOp(Op::Unpin { pin })),
        Err(e) => state.chat.error(e.to_string()),
    }
}

/// `/focus [TEXT]`: set the standing focus, or clear it.
pub(super) fn focus(state: &mut AppState, arg: Option<String>, fx: &mut Vec<Effect>) {
    if arg.is_none() && state.memory.focus().is_none() {
        return state.chat.notice(
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
            state.memory.set_pins(pins);
            state.chat.notice(message);
        }
        Event::Focus { focus, step } => {
            let message = match (&focus, state.memory.focus()) {
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
            state.memory.set_focus(focus);
            state.chat.notice(message);
        }
        Event::Todo { items } => state.memory.set_plan(items),
        Event::MemoryRefused { reason, message } => match reason {
            MemoryRefusal::AlreadyPinned => state.chat.notice(message),
            _ => state.chat.error(message),
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
