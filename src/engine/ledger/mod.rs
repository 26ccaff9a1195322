//! The ledger: everything a run keeps on disk about itself, in one place. A run directory
//! (`<data_dir>/runs/<run id>/`) holds `manifest.json` — one record per step ([`manifest`]), with
//! its handoffs ([`handoffs`]) — and
//! `sessions/`, one transcript per session ([`transcript`]). [`run_dir`] creates, finds, joins and
//! locks ([`ledger_lock`]) run directories and writes one step's record without losing other processes'
//! steps;
//! [`run_index`] knows where every run is (a run kept elsewhere with `--run-dir` registers in an
//! index under the data dir); [`run_list`] lists a workspace's runs for `--resume` and `/resume`.
//!
//! [`checkpoints`] indexes the step's workspace checkpoints (the store holds their contents);
//! [`prompts`] keeps the user's messages and rewinds for `/rewind`.
//!
//! The ledger sits above the leaf helpers and errors and below the tools: it imports no tool,
//! no handoff, no session and no wire type; of the checkpoint store, only its ids and the undo
//! stack's data.

pub(crate) mod checkpoints;
pub(crate) mod handoffs;
pub(crate) mod ledger_lock;
pub(crate) mod manifest;
pub(crate) mod prompts;
pub(crate) mod run_dir;
pub(crate) mod run_index;
pub(crate) mod run_list;
pub(crate) mod transcript;

pub(crate) use checkpoints::{CheckpointKind, CheckpointRecord, push as push_checkpoint};
pub use handoffs::{
    Cut, DocumentSource, FrozenFile, HandoffCause, HandoffReason, HandoffRecord, Held,
};
pub use manifest::{
    GenerationRecord, GenerationStart, Manifest, StepFigures, StepHistory, StepRecord,
    SubagentRecord, now_stamp,
};
pub use prompts::{PromptRecord, RewindMode, RewindPoint, RewindRecord, push as push_prompt};
pub use run_dir::{RunDir, join, save_step};
pub use run_list::{SessionSummary, kept_checkpoints};
pub use transcript::{SessionHeader, Transcript, TranscriptLine, load_transcript};

pub(crate) use handoffs::FrozenHandoff;
pub(crate) use manifest::SettingChange;
pub(crate) use run_dir::latest_run;
pub(crate) use transcript::{SubagentOf, read_transcript};
