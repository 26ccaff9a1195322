//! The terminal's events as the reducer's messages, and the wheel told from the arrow keys: with
//! alternate scroll, the terminal turns each wheel notch into an arrow key, so a burst of one
//! arrow arriving together is the wheel and a single one is a key.

use crossterm::event::Event as TermEvent;

use super::msg::Msg;
use super::view::ViewCache;

/// The most events read at once behind an arrow key, to tell the wheel from a key.
pub(super) const WHEEL_BURST_MAX: usize = 64;

/// `Some(true)` for a plain Up key press, `Some(false)` for Down, else None.
pub(super) fn wheel_arrow(ev: &TermEvent) -> Option<bool> {
    match ev {
        TermEvent::Key(k)
            if k.modifiers.is_empty() && k.kind == crossterm::event::KeyEventKind::Press =>
        {
            match k.code {
                crossterm::event::KeyCode::Up => Some(true),
                crossterm::event::KeyCode::Down => Some(false),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A terminal event as a message; a mouse event carries the pane under it in the last frame.
pub(super) fn term_msg(ev: TermEvent, cache: &ViewCache) -> Option<Msg> {
    match ev {
        TermEvent::Key(k) => Some(Msg::Key(k)),
        TermEvent::Paste(s) => Some(Msg::Paste(s)),
        TermEvent::Mouse(m) => Some(Msg::Mouse {
            event: m,
            pane: cache.pane_at(m.column, m.row),
            cell: cache.cell_at(m.column, m.row),
        }),
        TermEvent::Resize(..) => Some(Msg::Resize),
        TermEvent::FocusGained | TermEvent::FocusLost => None,
    }
}
