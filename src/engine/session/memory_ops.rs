//! The step's memory in the engine: `/pin`, `/pins rm`, `/focus`,
//! the `todo` and `recall` tools, and what the writing turn and the successor's briefing take
//! from them. The memory lives in the step's ledger record (`StepRecord.memory`); before the
//! first message names the step it waits in the step ledger (`StepLedger::memory`) and moves
//! into the record with it.

use serde_json::Value;

use super::Engine;
use crate::engine::ledger::now_stamp;
use crate::engine::protocol::{Event, Op, PinChange};
use crate::engine::secrets::redact;
use crate::engine::step_memory::{PinSource, Refused};
use crate::engine::tools::recall::{self, Source};
use crate::engine::tools::{ToolOutput, todo};
use crate::engine::types::ToolSpec;

impl Engine {
    /// `Op::Pin`, `Op::Unpin`, `Op::SetFocus`: applied at once, idle or not, saved in the ledger
    /// and answered with the new state (or why nothing changed). Other ops are ignored here.
    pub(super) fn on_memory_op(&mut self, op: Op) {
        let result = match op {
            Op::Pin { text } => {
                let time = now_stamp();
                self.ledger
                    .memory_mut()
                    .add_pin(&text, PinSource::Command, &time)
                    .map(|()| {
                        let added = self.ledger.memory().pins.last().map(|p| p.text.clone());
                        self.memory_changed();
                        self.emit_pins(PinChange::Added, added.into_iter().collect());
                    })
            }
            Op::Unpin { pin } => self.ledger.memory_mut().unpin(pin).map(|removed| {
                self.memory_changed();
                self.emit_pins(PinChange::Removed, removed);
            }),
            Op::SetFocus { focus } => {
                self.ledger
                    .memory_mut()
                    .set_focus(focus.as_deref())
                    .map(|()| {
                        self.memory_changed();
                        self.emit_focus();
                    })
            }
            _ => Ok(()),
        };
        if let Err(refused) = result {
            self.refuse_memory(refused);
        }
    }

    fn refuse_memory(&self, r: Refused) {
        self.emit(Event::MemoryRefused {
            reason: r.reason,
            message: r.message,
        });
    }

    /// The memory changed: the ledger learns it at once (nothing to save before the step exists).
    fn memory_changed(&mut self) {
        self.save_manifest_if_any();
    }

    /// The step's name, once the first message named it.
    fn step_label(&self) -> Option<String> {
        self.ledger.rec().map(|r| r.name.clone())
    }

    fn emit_pins(&self, change: PinChange, changed: Vec<String>) {
        self.emit(Event::Pins {
            pins: self.ledger.memory().pin_texts(),
            change,
            changed,
            step: self.step_label(),
        });
    }

    fn emit_focus(&self) {
        self.emit(Event::Focus {
            focus: self.ledger.memory().focus.clone(),
            step: self.step_label(),
        });
    }

    /// A resumed start: tell the front end what the ledger kept (nothing when it kept nothing).
    pub(super) fn emit_memory(&self) {
        let m = self.ledger.memory();
        if !m.pins.is_empty() {
            self.emit_pins(PinChange::Restored, Vec::new());
        }
        if m.focus.is_some() {
            self.emit_focus();
        }
        if !m.todo.is_empty() {
            self.emit(Event::Todo {
                items: m.todo.clone(),
            });
        }
    }

    /// The transcripts of the step's retired generations, oldest first.
    pub(super) fn predecessors(&self) -> Vec<Source> {
        let Some(rec) = self.ledger.rec() else {
            return Vec::new();
        };
        rec.retired
            .iter()
            .enumerate()
            .map(|(i, id)| Source {
                generation: rec
                    .per_generation
                    .iter()
                    .find(|g| g.session_id == *id)
                    .map_or(u32::try_from(i + 1).unwrap_or(u32::MAX), |g| g.generation),
                path: self.ledger.run_dir.transcript_path(id),
            })
            .collect()
    }

    /// The step's own tools: `todo` always, `recall` once the step has retired generations (a
    /// successor) or while old tool output is masked. Fixed for a session's life, so the cached
    /// prefix holds.
    pub(super) fn step_tool_specs(&self) -> Vec<ToolSpec> {
        let mut specs = vec![todo::spec()];
        specs.extend(self.recall_spec());
        specs
    }

    /// Whether `name` is one of the step's own tools.
    pub(super) fn is_step_tool(name: &str) -> bool {
        name == todo::NAME || name == recall::NAME
    }

    /// Run one of the step's own tools; None when the user aborted it.
    pub(super) async fn run_step_tool(&mut self, name: &str, input: &Value) -> Option<ToolOutput> {
        if name == todo::NAME {
            return Some(self.write_plan(input));
        }
        // Asked for in a first generation (not offered there), it says there is nothing to search.
        let sources = self.recall_sources();
        self.abortable(recall::run_call(input, sources)).await
    }

    /// The `todo` tool: the whole plan, replaced, kept in the ledger, shown by the front end.
    fn write_plan(&mut self, input: &Value) -> ToolOutput {
        let mut items = match todo::parse_call(input) {
            Ok(items) => items,
            Err(e) => return ToolOutput::from(e),
        };
        for item in &mut items {
            if let std::borrow::Cow::Owned(clean) = redact(&item.text) {
                item.text = clean;
            }
        }
        self.ledger.memory_mut().todo = items.clone();
        self.memory_changed();
        let answer = todo::answer(&items);
        self.emit(Event::Todo { items });
        ToolOutput::ok(answer)
    }

    /// The focus of a writing turn: the step's standing focus, then the one `/handoff FOCUS`
    /// gave, each on its own line.
    pub(super) fn handoff_focus(&self, manual: Option<String>) -> Option<String> {
        let manual = manual.filter(|f| !f.trim().is_empty());
        match (self.ledger.memory().focus.clone(), manual) {
            (Some(standing), Some(manual)) => Some(format!("{standing}\n{}", manual.trim())),
            (standing, manual) => standing.or(manual),
        }
    }

    /// The pins the user typed into the handoff file during its review (a `Pinned` section that
    /// the frozen document did not hold): pinned like `/pin`, and said.
    pub(super) fn adopt_typed_pins(&mut self, file: &str, frozen: &str) {
        let typed = crate::engine::step_memory::typed_pins(file, frozen);
        if typed.is_empty() {
            return;
        }
        let time = now_stamp();
        let mut added = Vec::new();
        for text in typed {
            match self
                .ledger
                .memory_mut()
                .add_pin(&text, PinSource::Editor, &time)
            {
                Ok(()) => added.push(text),
                // Typed twice, or pinned already: nothing to say.
                Err(r) if r.reason == crate::engine::step_memory::MemoryRefusal::AlreadyPinned => {}
                Err(r) => self.emit(Event::Warning {
                    message: format!(
                        "a pin typed in the handoff document was not kept: {}",
                        r.message
                    ),
                }),
            }
        }
        if !added.is_empty() {
            self.memory_changed();
            let added = added
                .iter()
                .map(|t| redact(t.trim()).into_owned())
                .collect();
            self.emit_pins(PinChange::FromEditor, added);
        }
    }
}
