//! Input-box helpers: message history and big pastes kept out of the textarea as chips.

/// One remembered input: the text as typed (chips as labels) and the pastes behind its chips, so
/// a recalled message sends what was pasted, not the label.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    text: String,
    pastes: Pastes,
}

/// Sent messages, for Up/Down recall. The text being typed is kept as a draft while browsing.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct History {
    entries: Vec<Entry>,
    pos: Option<usize>,
    draft: Entry,
}

impl History {
    /// A history holding `texts` (oldest first), as loaded from an earlier run.
    pub(crate) fn with_entries(texts: Vec<String>) -> History {
        History {
            entries: texts
                .into_iter()
                .map(|text| Entry {
                    text,
                    pastes: Pastes::default(),
                })
                .collect(),
            pos: None,
            draft: Entry::default(),
        }
    }

    /// The newest entry before `before` (all entries when `None`) that contains `query`
    /// (case-insensitive); an empty query matches the newest.
    pub(crate) fn find_back(&self, query: &str, before: Option<usize>) -> Option<usize> {
        let end = before.unwrap_or(self.entries.len()).min(self.entries.len());
        let q = query.to_lowercase();
        self.entries
            .get(..end)?
            .iter()
            .rposition(|e| e.text.to_lowercase().contains(&q))
    }

    /// Entry `idx`: its text and the pastes behind its chips.
    pub(crate) fn entry(&self, idx: usize) -> Option<(&str, &Pastes)> {
        self.entries.get(idx).map(|e| (e.text.as_str(), &e.pastes))
    }

    /// Stop browsing (the input was replaced from elsewhere).
    pub(crate) fn reset_browsing(&mut self) {
        self.pos = None;
        self.draft = Entry::default();
    }

    /// Remember a sent message with the pastes behind its chips (not an empty one, not a repeat
    /// of the last) and stop browsing.
    pub(crate) fn push(&mut self, text: &str, pastes: Pastes) {
        self.pos = None;
        self.draft = Entry::default();
        if text.trim().is_empty()
            || self
                .entries
                .last()
                .is_some_and(|l| l.text == text && l.pastes == pastes)
        {
            return;
        }
        self.entries.push(Entry {
            text: text.to_string(),
            pastes,
        });
    }

    /// The previous entry's text; its pastes replace `pastes`. `current` and `pastes` are kept
    /// as the draft when browsing starts.
    pub(crate) fn older(&mut self, current: &str, pastes: &mut Pastes) -> Option<String> {
        let pos = match self.pos {
            None if self.entries.is_empty() => return None,
            None => {
                self.draft = Entry {
                    text: current.to_string(),
                    pastes: std::mem::take(pastes),
                };
                self.entries.len() - 1
            }
            Some(0) => return None,
            Some(p) => p - 1,
        };
        self.pos = Some(pos);
        let entry = self.entries.get(pos)?;
        *pastes = entry.pastes.clone();
        Some(entry.text.clone())
    }

    /// The next entry's text (its pastes replace `pastes`), or the draft after the newest.
    pub(crate) fn newer(&mut self, pastes: &mut Pastes) -> Option<String> {
        let pos = self.pos?;
        if let Some(entry) = self.entries.get(pos + 1) {
            self.pos = Some(pos + 1);
            *pastes = entry.pastes.clone();
            Some(entry.text.clone())
        } else {
            self.pos = None;
            let draft = std::mem::take(&mut self.draft);
            *pastes = draft.pastes;
            Some(draft.text)
        }
    }

    /// True while an old entry is shown.
    #[cfg(test)]
    pub(crate) fn is_browsing(&self) -> bool {
        self.pos.is_some()
    }
}

/// Pastes at least this big become a chip instead of textarea text: the textarea re-measures all
/// of its lines on every edit, so megabytes in it make each keystroke slow.
pub(crate) const CHIP_BYTES: usize = 32 * 1024;
/// Pastes with at least this many lines become a chip.
pub(crate) const CHIP_LINES: usize = 500;

/// A paste kept out of the textarea.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Paste {
    /// What the input box shows in its place.
    pub(crate) label: String,
    /// The pasted text.
    pub(crate) text: String,
}

/// The chips of the message being typed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Pastes {
    items: Vec<Paste>,
}

/// True when a paste is big enough to be a chip.
pub(crate) fn needs_chip(text: &str) -> bool {
    text.len() >= CHIP_BYTES || text.lines().count() >= CHIP_LINES
}

/// `1,234,567`: the engine's digit grouping, so a count reads the same in both.
pub(crate) use crate::engine::step_memory::thousands;

/// `512 B`, `40.0 KB`, `10.0 MB` (binary multiples).
pub(crate) fn human_bytes(n: usize) -> String {
    const KB: f64 = 1024.0;
    let f = n as f64;
    if f >= KB * KB {
        format!("{:.1} MB", f / (KB * KB))
    } else if f >= KB {
        format!("{:.1} KB", f / KB)
    } else {
        format!("{n} B")
    }
}

/// `[pasted 10.0 MB, 123,456 lines]`.
pub(crate) fn chip_label(text: &str) -> String {
    let lines = text.lines().count();
    let unit = if lines == 1 { "line" } else { "lines" };
    format!(
        "[pasted {}, {} {unit}]",
        human_bytes(text.len()),
        thousands(lines)
    )
}

impl Pastes {
    /// Keep `text`; returns the chip label to put in the input box.
    pub(crate) fn add(&mut self, text: String) -> String {
        let label = chip_label(&text);
        self.items.push(Paste {
            label: label.clone(),
            text,
        });
        label
    }

    /// True when no chip is held.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Replace each chip label in `input` (in order, first occurrence after the previous one) by
    /// its paste. A chip whose label the user deleted is dropped.
    pub(crate) fn expand(&self, input: &str) -> String {
        let mut out = String::with_capacity(
            input.len() + self.items.iter().map(|p| p.text.len()).sum::<usize>(),
        );
        let mut rest = input;
        for paste in &self.items {
            if let Some(i) = rest.find(&paste.label) {
                out.push_str(&rest[..i]);
                out.push_str(&paste.text);
                rest = &rest[i + paste.label.len()..];
            }
        }
        out.push_str(rest);
        out
    }

    /// Take over the chips of `other` (messages joined into one input).
    pub(crate) fn extend(&mut self, other: Pastes) {
        self.items.extend(other.items);
    }

    /// Forget every chip (the input was cleared).
    pub(crate) fn clear(&mut self) {
        self.items.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_browses_and_restores_the_draft() {
        let mut h = History::default();
        let mut p = Pastes::default();
        assert_eq!(h.older("draft", &mut p), None, "empty history");
        h.push("one", Pastes::default());
        h.push("two", Pastes::default());
        h.push("two", Pastes::default());
        h.push("  ", Pastes::default());
        assert_eq!(h.older("draft", &mut p), Some("two".into()));
        assert!(h.is_browsing());
        assert_eq!(h.older("ignored", &mut p), Some("one".into()));
        assert_eq!(h.older("ignored", &mut p), None, "stays at the oldest");
        assert_eq!(h.newer(&mut p), Some("two".into()));
        assert_eq!(h.newer(&mut p), Some("draft".into()));
        assert!(!h.is_browsing());
        assert_eq!(h.newer(&mut p), None);
    }

    #[test]
    fn history_keeps_the_pastes_behind_chips() {
        let mut h = History::default();
        let mut sent = Pastes::default();
        let label = sent.add("A".repeat(CHIP_BYTES));
        h.push(&format!("{label} why?"), sent);
        // A draft with a chip of its own is browsed away from and comes back whole.
        let mut live = Pastes::default();
        let draft_label = live.add("D".repeat(CHIP_BYTES + 1));
        let recalled = h.older(&draft_label, &mut live).unwrap();
        assert_eq!(
            live.expand(&recalled),
            format!("{} why?", "A".repeat(CHIP_BYTES))
        );
        assert_eq!(h.newer(&mut live), Some(draft_label.clone()));
        assert_eq!(live.expand(&draft_label), "D".repeat(CHIP_BYTES + 1));
    }

    #[test]
    fn chip_labels() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(123_456), "123,456");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(10 * 1024 * 1024), "10.0 MB");
        let big = "x\n".repeat(123_456);
        assert_eq!(chip_label(&big), "[pasted 241.1 KB, 123,456 lines]");
        assert!(needs_chip(&big));
        assert!(!needs_chip("small\npaste"));
    }

    #[test]
    fn chips_expand_in_order_and_vanish_when_deleted() {
        let mut p = Pastes::default();
        let a = p.add("AAA\n".repeat(600));
        let b = p.add("BBB\n".repeat(600));
        assert_eq!(a, b, "same size, same label");
        let input = format!("look: {a} and {b}!");
        let out = p.expand(&input);
        assert_eq!(
            out,
            format!("look: {} and {}!", "AAA\n".repeat(600), "BBB\n".repeat(600))
        );
        p.clear();
        assert!(p.is_empty());

        let c = p.add("C".repeat(40_000));
        let out = p.expand("the chip was deleted");
        assert_eq!(out, "the chip was deleted");
        assert!(!c.is_empty());
    }
}
