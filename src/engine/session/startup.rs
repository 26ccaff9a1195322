//! Building the engine from its parameters: a fresh run, a run directory joined with a new step,
//! or `--continue` attached to the recorded latest successor of a run (its transcript read back,
//! calls a crash left without results answered, the step's name claimed again).

use tokio::sync::mpsc;

use super::approval_state::ApprovalState;
use super::checkpointing::Checkpointing;
use super::command_turns::load_notices;
use super::conversation::{Conversation, Identity};
use super::counters::Counters;
use super::dangling_calls::repair_dangling_tool_uses;
use super::handoff::Handoffs;
use super::language_servers::LanguageServers;
use super::outbox::Outbox;
use super::params::{EngineParams, Extensions, Places, Resume, StartParams, ToolParams};
use super::planning::Planning;
use super::run_context::RunContext;
use super::step_ledger::StepLedger;
use super::user_hooks::Hooks;
use super::{Engine, Inbox};
use crate::engine::error::{Error, ResumeError};
use crate::engine::fsutil::{now_unix, rfc3339};
use crate::engine::ledger::{Manifest, RunDir, TranscriptLine, read_transcript};
use crate::engine::protocol::{Event, Op};
use crate::engine::tokens::Estimator;
use crate::engine::tools::sandbox::{self, Support};
use crate::engine::types::Message;

/// What the engine does first once it runs, taken from its parameters.
pub(super) struct FirstMoves {
    /// Said once the front end listens (torn transcript lines, a run skipped by `--continue`).
    pub(super) warnings: Vec<String>,
    /// The run continues an earlier one: announce it and reopen a review it left open.
    pub(super) resumed: bool,
    /// A first message the engine sends itself (the demo).
    pub(super) autostart: Option<String>,
}

/// A run directory joined with a new step keeps the steps it has; a new one gets a new ledger.
fn joined_or_new(run_dir: &RunDir, places: &Places, provider: &str, model: &str) -> Manifest {
    Manifest::load(&run_dir.manifest_path()).unwrap_or_else(|_| Manifest {
        run_id: run_dir.run_id.clone(),
        created: rfc3339(now_unix().0),
        workspace: places.workspace.clone(),
        provider: provider.to_string(),
        model: model.to_string(),
        steps: Vec::new(),
    })
}

/// The notices of the start: what the sandbox can do here and what it makes of the workspace
/// (pinned now, so a workspace moved later is not followed), and what the custom commands and
/// skills could not load.
fn start_notices(tools: &ToolParams, places: &Places, extensions: &Extensions) -> Vec<String> {
    let mut notices = Vec::new();
    notices.extend(Support::current().notice(&tools.sandbox));
    sandbox::pin_workspace(&places.workspace);
    notices.extend(sandbox::start_notice(&tools.sandbox, &places.workspace));
    notices.extend(load_notices(extensions));
    notices
}

/// A resumed run: its ledger, the step it continues and that step's latest session.
pub(super) struct Resumed {
    pub(super) manifest: Manifest,
    pub(super) step: Option<usize>,
    pub(super) session: Conversation,
}

/// The engine of `p`, with its op receiver and its event sender, and what it does first.
pub(super) fn build(
    p: EngineParams,
    ops: mpsc::Receiver<Op>,
    events: mpsc::UnboundedSender<Event>,
) -> Result<(Engine, FirstMoves), Error> {
    let EngineParams {
        provider,
        settings,
        places,
        run_dir,
        prompt,
        handoff,
        tools,
        front_end,
        start,
        mcp,
        lsp,
        side_events: _,
        masking,
        mut hooks,
        extensions,
    } = p;
    let mut prompt = prompt;
    // The skills' names and descriptions: the same bytes for the same files, so every
    // session's prompt (and the provider's cache of it) stays the same.
    if let Some(listing) = extensions.skills.listing() {
        prompt.system_prompt = format!("{}\n\n{}", prompt.system_prompt.trim_end(), listing);
    }
    let StartParams {
        step: step_flag,
        resume,
        autostart,
    } = start;
    // The handoff line keeps the requests' output cap free below the window.
    let mut settings = settings;
    settings.thresholds = settings.thresholds_for(settings.thresholds.window, provider.max_tokens);
    let tokens = Estimator::load(&places.data_dir, &settings.model);
    let mut warnings = start_notices(&tools, &places, &extensions);
    let (manifest, step, session, run_dir) = match &resume {
        Some(r) => {
            warnings.extend(r.warnings.iter().cloned());
            let resumed = resumed_state(
                r,
                step_flag.as_deref(),
                &prompt.system_prompt,
                &mut warnings,
            )?;
            (
                resumed.manifest,
                resumed.step,
                Some(resumed.session),
                run_dir,
            )
        }
        None => (
            joined_or_new(&run_dir, &places, provider.client.name(), &settings.model),
            None,
            None,
            run_dir,
        ),
    };
    let rec = step.and_then(|i| manifest.steps.get(i));
    let claim = match resume {
        Some(_) => super::step_claim::claim_resumed(places.workbench.as_deref(), rec)?,
        None => None,
    };
    let conversation = session.unwrap_or_else(|| Conversation::none(&prompt.system_prompt));
    // The mode asked for, else the one a continued step last recorded, else normal.
    let mode = tools
        .mode
        .or_else(|| rec.and_then(|r| r.settings.last()).map(|c| c.mode))
        .unwrap_or_default();
    let strategies = handoff
        .context
        .strategies(settings.thresholds.headroom, provider.max_tokens);
    let out = Outbox::new(events.clone());
    let workspace = places.workspace.clone();
    let rules = std::mem::take(&mut hooks.permissions);
    let denied = rules.denied(&workspace);
    let approvals = ApprovalState::new(&tools, front_end, workspace, rules, out.clone());
    let planning = Planning::new(mode, tools.sandbox.clone());
    let jobs = super::jobs::main_table(&run_dir.root, tools.jobs, &events);
    let ledger = StepLedger::new(manifest, step, run_dir, claim, out.clone());
    let checkpoints = Checkpointing::new(places.clone(), out);
    let engine = Engine {
        handoff: Handoffs::new(handoff.after),
        run: RunContext {
            provider,
            places,
            prompt,
            handoff,
            tools,
            front_end,
            step: step_flag,
            mcp,
            lsp: LanguageServers::new(lsp),
            jobs,
            strategies,
            masking,
            extensions,
            denied,
            events,
        },
        settings,
        inbox: Inbox::new(ops),
        ledger,
        conversation,
        turn: None,
        approvals,
        counters: Counters::new(tokens),
        checkpoints,
        hooks: Hooks::new(hooks, resume.is_some()),
        planning,
    };
    let first = FirstMoves {
        warnings,
        resumed: resume.is_some(),
        autostart,
    };
    Ok((engine, first))
}

/// `--continue`: the recorded latest successor of the last step, never a retired session.
/// `base_prompt`: the session's prompt until its announcement builds the whole one.
pub(super) fn resumed_state(
    r: &Resume,
    step_name: Option<&str>,
    base_prompt: &str,
    warnings: &mut Vec<String>,
) -> Result<Resumed, ResumeError> {
    let manifest = Manifest::load(&r.run_dir.manifest_path()).map_err(ResumeError::Manifest)?;
    // `--step NAME` picks a step of a run that holds several; else the last one that ran.
    let step = match step_name {
        Some(name) => Some(
            manifest
                .steps
                .iter()
                .position(|s| s.name == name)
                .ok_or_else(|| ResumeError::NoStep {
                    step: name.to_string(),
                    steps: manifest.steps.iter().map(|s| s.name.clone()).collect(),
                })?,
        ),
        None => manifest
            .steps
            .iter()
            .rposition(|s| !s.session_id.is_empty()),
    };
    let Some(rec) = step
        .and_then(|i| manifest.steps.get(i))
        .filter(|s| !s.session_id.is_empty())
    else {
        return Err(ResumeError::NoSession);
    };
    let path = r.run_dir.transcript_path(&rec.session_id);
    let loaded = read_transcript(&path).map_err(|source| ResumeError::Session {
        id: rec.session_id.clone(),
        source,
    })?;
    let (header, mut messages) = (loaded.header, loaded.messages);
    if loaded.torn > 0 {
        warnings.push(format!(
            "{}: {} torn line{} skipped (cut off by a crash mid-write); the conversation is \
                 rebuilt from the others",
            path.display(),
            loaded.torn,
            if loaded.torn == 1 { "" } else { "s" }
        ));
    }
    let mut transcript = crate::engine::ledger::Transcript::open_append(path);
    // A session that ended mid-tool (a crash, a kill) left tool calls without results: answer
    // them so the history is valid again, and record that in the transcript.
    if repair_dangling_tool_uses(&mut messages).is_some() {
        transcript.append(&TranscriptLine::Replaced {
            messages: messages.clone(),
        });
    }
    let cost_usd = rec
        .per_generation
        .iter()
        .find(|g| g.session_id == header.session_id)
        .map_or(0.0, |g| g.cost_usd);
    let who = Identity {
        id: header.session_id,
        parent: header.parent_session,
        generation: header.generation,
    };
    // The gauge starts where the session left it: the provider's last reading, plus an
    // estimate of what came after; a history without one is estimated whole. This session's
    // own reading (the ledger's step ctx may be a retired session's); none after a
    // replacement (compaction): the history is estimated then.
    let (ctx, counted) = loaded
        .last_context
        .map_or((0, 0), |c| (c.tokens, c.messages));
    let appended_chars = messages.iter().skip(counted).map(Message::char_len).sum();
    let mut session = Conversation::new(who, messages, transcript, base_prompt);
    session.cost_usd = cost_usd;
    session.ctx = ctx;
    session.appended_chars = appended_chars;
    Ok(Resumed {
        manifest: manifest.clone(),
        step,
        session,
    })
}
