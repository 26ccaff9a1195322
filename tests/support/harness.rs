//! Drive the real engine against the fake provider: temp workspace, data dir and run dir.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use flower_tui::engine::context::{Thresholds, WindowSource};
use flower_tui::engine::ledger::{Manifest, RunDir};
use flower_tui::engine::policy::{ApprovalPolicy, ContextPolicy, FrontEnd, HandoffMode};
use flower_tui::engine::protocol::{
    Approval, Event, ExitReason, HandoffId, HandoffPhase, Op, TurnId,
};
use flower_tui::engine::provider::Provider;
use flower_tui::engine::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use flower_tui::engine::provider::openai::{OpenAiConfig, OpenAiProvider};
use flower_tui::engine::provider::retry::RetryPolicy;
use flower_tui::engine::session::{
    self, EngineHandle, EngineParams, HandoffParams, ModelSettings, Places, PromptParams,
    ProviderParams, StartParams, ToolParams,
};
use tempfile::TempDir;

use super::check::picked;
use super::fake::FakeServer;
use super::script::Script;

pub const KEY: &str = "sk-test-SECRET-0123456789abcdef";

pub struct Harness {
    pub dir: TempDir,
    pub server: FakeServer,
    pub workspace: PathBuf,
    pub data: PathBuf,
}

impl Harness {
    pub async fn new() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        let data = dir.path().join("data");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::create_dir_all(&data).unwrap();
        let workspace = workspace.canonicalize().unwrap();
        Harness {
            dir,
            server: FakeServer::start().await,
            workspace,
            data,
        }
    }

    pub fn anthropic(&self) -> Arc<dyn Provider> {
        Arc::new(AnthropicProvider::new(AnthropicConfig {
            base_url: self.server.base_url(),
            api_key: KEY.into(),
            http: Some(super::fake::client()),
            ..Default::default()
        }))
    }

    pub fn openai(&self) -> Arc<dyn Provider> {
        Arc::new(OpenAiProvider::new(OpenAiConfig {
            api_key: KEY.into(),
            base_url: self.server.base_url(),
            http: Some(super::fake::client()),
            ..Default::default()
        }))
    }

    /// Write a file of the workspace (its folders made); its path.
    pub fn file(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.workspace.join(rel);
        super::files::write(&path, contents);
        path
    }

    /// A log of 34,000 characters at `rel` in the workspace ("error: disk full", 2,000 lines): a
    /// tool result big enough that a rescue shortens it.
    pub fn big_log(&self, rel: &str) -> PathBuf {
        self.file(rel, "error: disk full\n".repeat(2_000))
    }

    /// The model's replies (see [`Script`]).
    pub fn script(&self) -> Script<'_> {
        self.server.script()
    }

    pub fn workbench(&self) -> PathBuf {
        self.workspace.join(".flower")
    }

    /// Engine parameters whose front end reviews each handoff document before its successor
    /// starts (an interactive front end with the review on).
    pub fn reviewed(&self, window: u64, headroom: u64) -> EngineParams {
        let mut p = self.params(window, headroom);
        p.front_end = FrontEnd::Interactive { review: true };
        p
    }

    /// A reviewing engine (40,000 window, 10,000 headroom) whose first turn, "work", goes over
    /// the line and whose writing answers `doc`; the successor answers "ok". Returned once the
    /// review waits, with the frozen handoff, its file and what the file held then.
    pub async fn in_review(&self, doc: &str) -> (Running, HandoffId, PathBuf, String) {
        self.script().over_the_line(doc).at(5_000).text("ok");
        let mut r = start(self.reviewed(40_000, 10_000));
        r.send_turn("work").await;
        let (handoff, path) = r.frozen_for_review().await;
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("the file under review {}: {e}", path.display()));
        (r, handoff, path, text)
    }

    /// Engine parameters whose conversation is compacted, not handed off, as it fills.
    pub fn compacting(&self, window: u64, headroom: u64) -> EngineParams {
        let mut p = self.params(window, headroom);
        p.handoff.context = ContextPolicy::Compaction;
        p
    }

    /// Engine parameters that continue the run in `root` (as `--continue` does).
    pub fn resumed(&self, window: u64, headroom: u64, root: &std::path::Path) -> EngineParams {
        let mut p = self.params(window, headroom);
        p.run_dir = RunDir::open(root);
        p.start.resume = Some(session::Resume::at(RunDir::open(root)));
        p
    }

    /// Engine parameters that continue the run in `root` in the terminal (as the TUI's
    /// `--continue` does: an interactive front end, no review).
    pub fn reopened(&self, root: &std::path::Path) -> EngineParams {
        let mut p = self.resumed(200_000, 50_000, root);
        p.front_end = FrontEnd::Interactive { review: false };
        p
    }

    /// Engine parameters with a fresh run directory; tweak fields before `spawn`.
    pub fn params(&self, window: u64, headroom: u64) -> EngineParams {
        let run_dir = RunDir::create(&self.data, None).unwrap();
        EngineParams {
            provider: ProviderParams {
                client: self.anthropic(),
                max_tokens: 1024,
                retry: RetryPolicy {
                    max_tries: 5,
                    base_delay: Duration::from_millis(1),
                    max_delay: Duration::from_millis(5),
                    ..RetryPolicy::default()
                },
                demo: false,
            },
            settings: ModelSettings {
                model: "claude-test".into(),
                effort: None,
                thresholds: Thresholds::new(window, headroom),
                window_source: WindowSource::ModelName,
            },
            places: Places {
                workspace: self.workspace.clone(),
                workbench: Some(self.workbench()),
                data_dir: self.data.clone(),
                checkpoints: flower_tui::engine::policy::CheckpointPolicy::On,
            },
            run_dir,
            prompt: PromptParams {
                system_prompt: "You are a test.".into(),
                instructions: Default::default(),
                style: Default::default(),
            },
            handoff: HandoffParams {
                context: ContextPolicy::Handoff,
                // The suites written for the blocking handoff keep it; background ones say so.
                mode: HandoffMode::Blocking,
                max_generations: 8,
                after: None,
            },
            tools: ToolParams {
                max_iterations: 50,
                approvals: ApprovalPolicy::Auto,
                sandbox: flower_tui::engine::tools::sandbox::SandboxPolicy::off(),
                sandbox_approval: flower_tui::engine::policy::SandboxApproval::Skip,
                bash_timeout: Duration::from_secs(30),
                jobs: Default::default(),
                subagent: Default::default(),
                mode: None,
                web: Default::default(),
                files: Default::default(),
                terminals: Default::default(),
            },
            front_end: FrontEnd::Headless,
            start: StartParams {
                step: Some("test-step".into()),
                resume: None,
                autostart: None,
            },
            mcp: None,
            lsp: None,
            side_events: None,
            masking: Default::default(),
            hooks: Default::default(),
            extensions: Default::default(),
        }
    }
}

pub struct Running {
    pub h: EngineHandle,
    pub run_root: PathBuf,
    pub events: Vec<Event>,
    /// The last turn id given out.
    pub last_turn: TurnId,
}

pub fn start(params: EngineParams) -> Running {
    let run_root = params.run_dir.root.clone();
    Running {
        h: session::spawn(params).unwrap(),
        run_root,
        events: Vec::new(),
        last_turn: TurnId(0),
    }
}

impl Running {
    pub async fn send(&self, op: Op) {
        self.h.ops.send(op).await.unwrap();
    }

    /// Answer the approval question about the call `id`.
    pub async fn answer(&self, id: &str, decision: Approval) {
        let id = id.into();
        self.send(Op::Approval { id, decision }).await;
    }

    /// Collect events until `stop` matches one (included); panics after 20 s.
    pub async fn until(&mut self, mut stop: impl FnMut(&Event) -> bool) -> Vec<Event> {
        let mut got = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let ev = tokio::time::timeout_at(deadline, self.h.events.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out; events so far: {got:#?}"))
                .expect("engine stopped");
            let done = stop(&ev);
            got.push(ev.clone());
            self.events.push(ev);
            if done {
                return got;
            }
        }
    }

    /// Collect events until `pick` gives a value for one; that value.
    pub async fn until_some<T>(&mut self, pick: impl Fn(&Event) -> Option<T>) -> T {
        let mut found = None;
        self.until(|e| {
            let got = pick(e);
            let done = got.is_some();
            if done {
                found = got;
            }
            done
        })
        .await;
        found.expect("`until` returns at the event picked")
    }

    /// Collect events through the next `Frozen` phase; what it says.
    pub async fn frozen(&mut self) -> Frozen {
        self.until_some(|e| match e {
            Event::Handoff(HandoffPhase::Frozen {
                handoff,
                path,
                degraded,
                awaits_review,
                markdown,
                ..
            }) => Some(Frozen {
                handoff: *handoff,
                path: path.clone(),
                degraded: *degraded,
                awaits_review: *awaits_review,
                markdown: markdown.clone(),
            }),
            _ => None,
        })
        .await
    }

    /// [`Running::frozen`] for a review: the document has a file and the successor waits for
    /// the review (the test fails otherwise); the handoff and its file.
    pub async fn frozen_for_review(&mut self) -> (HandoffId, PathBuf) {
        let f = self.frozen().await;
        match f {
            Frozen {
                handoff,
                path: Some(path),
                awaits_review: true,
                ..
            } => (handoff, path),
            other => panic!("not frozen for a review: {other:#?}"),
        }
    }

    /// A new turn id, as a front end numbers its turns.
    pub fn new_turn(&mut self) -> TurnId {
        self.last_turn = self.last_turn.next();
        self.last_turn
    }

    /// Send a user message; returns its turn.
    pub async fn send_turn(&mut self, text: &str) -> TurnId {
        let turn = self.new_turn();
        self.send(Op::UserTurn {
            turn,
            text: text.into(),
        })
        .await;
        turn
    }

    /// Send `/handoff [focus]`; returns its turn.
    pub async fn send_handoff(&mut self, focus: Option<&str>) -> TurnId {
        let turn = self.new_turn();
        self.send(Op::Handoff {
            turn,
            focus: focus.map(str::to_string),
        })
        .await;
        turn
    }

    /// Collect events through the `TurnEnd` of `turn`.
    pub async fn until_end(&mut self, turn: TurnId) -> Vec<Event> {
        self.until(|e| matches!(e, Event::TurnEnd { turn: t, .. } if *t == turn))
            .await
    }

    /// Send a user turn and collect its events through its `TurnEnd`.
    pub async fn turn(&mut self, text: &str) -> Vec<Event> {
        let turn = self.send_turn(text).await;
        self.until_end(turn).await
    }

    /// [`Running::turn`], and the turn completed: the test fails otherwise, naming the line that
    /// asked and how the turn ended, with its events.
    #[track_caller]
    pub fn completed_turn<'a>(
        &'a mut self,
        text: &'a str,
    ) -> impl Future<Output = Vec<Event>> + 'a {
        let asked = std::panic::Location::caller();
        async move {
            let ev = self.turn(text).await;
            let end = turn_end(&ev);
            assert!(
                end == "completed",
                "{asked}: the turn ended {end:?}, not completed: {ev:#?}"
            );
            ev
        }
    }

    pub fn manifest(&self) -> Manifest {
        Manifest::load(&self.run_root.join("manifest.json")).unwrap()
    }

    pub async fn shutdown(self) {
        let _ = self.h.ops.send(Op::Shutdown).await;
        let _ = tokio::time::timeout(Duration::from_secs(5), self.h.task).await;
    }
}

pub fn turn_end(events: &[Event]) -> String {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::TurnEnd { reason, .. } => Some(reason.to_string()),
            _ => None,
        })
        .unwrap_or_default()
}

/// What a `Frozen` handoff phase says (the fields the suites check).
#[derive(Debug, Clone)]
pub struct Frozen {
    pub handoff: HandoffId,
    pub path: Option<PathBuf>,
    pub degraded: bool,
    pub awaits_review: bool,
    pub markdown: String,
}

/// The handoff phases among `events`, in order.
pub fn phases(events: &[Event]) -> Vec<HandoffPhase> {
    picked!(events, Event::Handoff(p) => p.clone())
}

/// The last turn's exit reason, as a type.
pub fn exit_reason(events: &[Event]) -> Option<ExitReason> {
    events.iter().rev().find_map(|e| match e {
        Event::TurnEnd { reason, .. } => Some(*reason),
        _ => None,
    })
}

pub fn text_of(events: &[Event]) -> String {
    picked!(events, Event::TextDelta { text, .. } => text.as_str()).concat()
}

/// Every file under `root`, recursively.
pub fn all_files(root: &std::path::Path) -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !e.file_type().is_ok_and(|t| t.is_socket()) {
                // A socket (the checkpoint feed keeper's) holds no bytes to read.
                out.push(p);
            }
        }
    }
    out
}

/// The first events of an Anthropic text stream (no `message_stop`): for `Reply::Stall`.
pub fn text_prefix(text: &str) -> Vec<u8> {
    super::fake::anthropic::Stream::new(super::fake::U::default())
        .text(text)
        .head_events()
        .concat()
}

/// What a scripted reply with these plain token numbers costs on `model`.
pub fn price(model: &str, input: u64, output: u64) -> f64 {
    flower_tui::engine::pricing::cost_usd(
        model,
        &flower_tui::engine::types::Usage {
            input_tokens: input,
            output_tokens: output,
            ..Default::default()
        },
    )
}
