//! The front end's mirror of the step's memory: the pins, the plan and the standing focus as the
//! engine last reported them (the engine owns the memory; `/pins`, the plan above the input and
//! the editor title read this copy), the `/pins` argument parser and the `/pins` listing.

use crate::engine::protocol::{PinRef, TodoItem};

/// The step's memory as the engine last reported it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct MemoryView {
    /// The pins, oldest first (numbered from 1 by `/pins`).
    pins: Vec<String>,
    /// The plan (the `todo` tool's list).
    plan: Vec<TodoItem>,
    /// The standing focus.
    focus: Option<String>,
}

impl MemoryView {
    /// The pins, oldest first.
    #[cfg(test)]
    pub(crate) fn pins(&self) -> &[String] {
        &self.pins
    }

    /// The plan.
    pub(crate) fn plan(&self) -> &[TodoItem] {
        &self.plan
    }

    /// The standing focus, if one is set.
    pub(crate) fn focus(&self) -> Option<&str> {
        self.focus.as_deref()
    }

    /// The pins changed.
    pub(crate) fn set_pins(&mut self, pins: Vec<String>) {
        self.pins = pins;
    }

    /// The standing focus was set or cleared.
    pub(crate) fn set_focus(&mut self, focus: Option<String>) {
        self.focus = focus;
    }

    /// The plan changed.
    pub(crate) fn set_plan(&mut self, plan: Vec<TodoItem>) {
        self.plan = plan;
    }
}

/// The usage line of `/pins`.
pub(crate) const PINS_USAGE: &str =
    "usage: /pins (list) · /pins rm N (unpin number N) · /pins clear";

/// What `/pins …` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PinsCommand {
    /// List the pins.
    List,
    /// Unpin.
    Unpin(PinRef),
}

/// Why the argument of `/pins` was not understood (the text is what the user reads).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PinsError {
    /// `rm N` with something other than a number from 1.
    #[error("/pins: `{0}` is not a pin number; {usage}", usage = PINS_USAGE)]
    NotANumber(String),
    /// Anything else.
    #[error("{usage}", usage = PINS_USAGE)]
    Usage,
}

/// Parse the argument of `/pins`: nothing, `rm N` (also `remove`, `del`, `unpin`), `clear`.
pub(crate) fn parse_pins(arg: Option<&str>) -> Result<PinsCommand, PinsError> {
    let words: Vec<&str> = arg.unwrap_or_default().split_whitespace().collect();
    match words.as_slice() {
        [] | ["list"] | ["ls"] => Ok(PinsCommand::List),
        ["clear"] | ["rm", "all"] => Ok(PinsCommand::Unpin(PinRef::All)),
        ["rm" | "remove" | "del" | "delete" | "unpin", n] => {
            match n.trim_start_matches('#').parse::<usize>() {
                Ok(n) if n >= 1 => Ok(PinsCommand::Unpin(PinRef::Number(n))),
                _ => Err(PinsError::NotANumber((*n).to_string())),
            }
        }
        _ => Err(PinsError::Usage),
    }
}

/// The `/pins` listing.
pub(crate) fn pins_report(view: &MemoryView) -> String {
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
                .to_string()
                .contains("not a pin number")
        );
        assert!(
            parse_pins(Some("rm x"))
                .unwrap_err()
                .to_string()
                .contains("`x`")
        );
        assert_eq!(parse_pins(Some("what")), Err(PinsError::Usage));
        assert_eq!(PinsError::Usage.to_string(), PINS_USAGE);
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
