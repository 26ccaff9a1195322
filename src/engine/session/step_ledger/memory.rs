//! The step's memory: `/pin`, `/pins rm`, `/focus`, the `todo` and `recall` tools, and what the
//! writing turn and the successor's briefing take from them. The memory lives in the step's
//! ledger record (`StepRecord.memory`); before the first message names the step it waits in the
//! step ledger (`StepLedger::memory`) and moves into the record with it. Every change is saved
//! at once and answered with the new state (or why nothing changed).

use serde_json::Value;

use super::StepLedger;
use crate::engine::ledger::now_stamp;
use crate::engine::protocol::{Event, Op, PinChange};
use crate::engine::secrets::redact;
use crate::engine::step_memory::{MemoryRefusal, PinSource, Refused, typed_pins};
use crate::engine::tools::recall::{self, Source};
use crate::engine::tools::{ToolOutput, todo};
use crate::engine::types::ToolSpec;

impl StepLedger {
    /// `Op::Pin`, `Op::Unpin`, `Op::SetFocus`: applied at once, idle or not, saved and answered
    /// with the new state (or why nothing changed). Other ops are ignored here.
    pub(in crate::engine::session) fn on_memory_op(&mut self, op: Op) {
        let result = match op {
            Op::Pin { text } => {
                let time = now_stamp();
                self.memory_mut()
                    .add_pin(&text, PinSource::Command, &time)
                    .map(|()| {
                        let added = self.memory().pins.last().map(|p| p.text.clone());
                        self.save_if_any();
                        self.emit_pins(PinChange::Added, added.into_iter().collect());
                    })
            }
            Op::Unpin { pin } => self.memory_mut().unpin(pin).map(|removed| {
                self.save_if_any();
                self.emit_pins(PinChange::Removed, removed);
            }),
            Op::SetFocus { focus } => self.memory_mut().set_focus(focus.as_deref()).map(|()| {
                self.save_if_any();
                self.emit_focus();
            }),
            _ => Ok(()),
        };
        if let Err(Refused { reason, message }) = result {
            self.out.emit(Event::MemoryRefused { reason, message });
        }
    }

    /// The step's name, once the first message named it.
    fn step_label(&self) -> Option<String> {
        self.rec().map(|r| r.name.clone())
    }

    fn emit_pins(&self, change: PinChange, changed: Vec<String>) {
        self.out.emit(Event::Pins {
            pins: self.memory().pin_texts(),
            change,
            changed,
            step: self.step_label(),
        });
    }

    fn emit_focus(&self) {
        self.out.emit(Event::Focus {
            focus: self.memory().focus.clone(),
            step: self.step_label(),
        });
    }

    /// A resumed start: tell the front end what the ledger kept (nothing when it kept nothing).
    pub(in crate::engine::session) fn emit_memory(&self) {
        let m = self.memory();
        if !m.pins.is_empty() {
            self.emit_pins(PinChange::Restored, Vec::new());
        }
        if m.focus.is_some() {
            self.emit_focus();
        }
        if !m.todo.is_empty() {
            self.out.emit(Event::Todo {
                items: m.todo.clone(),
            });
        }
    }

    /// The transcripts of the step's retired generations, oldest first.
    pub(in crate::engine::session) fn predecessors(&self) -> Vec<Source> {
        let Some(rec) = self.rec() else {
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
                path: self.run_dir.transcript_path(id),
            })
            .collect()
    }

    /// What `recall` searches: the retired generations' transcripts, then `own` (this
    /// generation's, searched while old tool output is masked: a masked output is found there).
    pub(in crate::engine::session) fn recall_sources(&self, own: Option<Source>) -> Vec<Source> {
        let mut sources = self.predecessors();
        sources.extend(own);
        sources
    }

    /// The step's own tools: `todo` always, `recall` once the step has retired generations (a
    /// successor) or while old tool output is masked (`own`: this generation's transcript).
    /// Fixed for a session's life, so the cached prefix holds.
    pub(in crate::engine::session) fn step_tool_specs(&self, own: Option<Source>) -> Vec<ToolSpec> {
        let mut specs = vec![todo::spec()];
        let generation = own.as_ref().map(|o| o.generation);
        let sources = self.recall_sources(own);
        match generation {
            Some(generation) => specs.push(recall::spec_with_own(&sources, generation)),
            None if !sources.is_empty() => specs.push(recall::spec(&sources)),
            None => {}
        }
        specs
    }

    /// The `todo` tool: the whole plan, replaced, kept in the ledger, shown by the front end.
    pub(in crate::engine::session) fn write_todo(&mut self, input: &Value) -> ToolOutput {
        let mut items = match todo::parse_call(input) {
            Ok(items) => items,
            Err(e) => return ToolOutput::from(e),
        };
        for item in &mut items {
            if let std::borrow::Cow::Owned(clean) = redact(&item.text) {
                item.text = clean;
            }
        }
        self.memory_mut().todo = items.clone();
        self.save_if_any();
        let answer = todo::answer(&items);
        self.out.emit(Event::Todo { items });
        ToolOutput::ok(answer)
    }

    /// The focus of a writing turn: the step's standing focus, then the one `/handoff FOCUS`
    /// gave, each on its own line.
    pub(in crate::engine::session) fn handoff_focus(
        &self,
        manual: Option<String>,
    ) -> Option<String> {
        let manual = manual.filter(|f| !f.trim().is_empty());
        match (self.memory().focus.clone(), manual) {
            (Some(standing), Some(manual)) => Some(format!("{standing}\n{}", manual.trim())),
            (standing, manual) => standing.or(manual),
        }
    }

    /// The pins the user typed into the handoff file during its review (a `Pinned` section that
    /// the frozen document did not hold): pinned like `/pin`, and said.
    pub(in crate::engine::session) fn adopt_typed_pins(&mut self, file: &str, frozen: &str) {
        let typed = typed_pins(file, frozen);
        if typed.is_empty() {
            return;
        }
        let time = now_stamp();
        let mut added = Vec::new();
        for text in typed {
            match self.memory_mut().add_pin(&text, PinSource::Editor, &time) {
                Ok(()) => added.push(text),
                // Typed twice, or pinned already: nothing to say.
                Err(r) if r.reason == MemoryRefusal::AlreadyPinned => {}
                Err(r) => self.out.emit(Event::Warning {
                    message: format!(
                        "a pin typed in the handoff document was not kept: {}",
                        r.message
                    ),
                }),
            }
        }
        if !added.is_empty() {
            self.save_if_any();
            let added = added
                .iter()
                .map(|t| redact(t.trim()).into_owned())
                .collect();
            self.emit_pins(PinChange::FromEditor, added);
        }
    }
}
