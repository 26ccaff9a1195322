//! Key bindings as data: one table `{ context, key, action, desc, hint }`. The footer hints and
//! `/help` are generated from it, and the reducer looks actions up in it.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// Where a binding applies. The reducer asks for the contexts that are live right now, most
/// specific first, and the first binding that matches wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Context {
    /// Everywhere, whatever has the focus.
    Global,
    /// The input box has the focus.
    Input,
    /// The slash-command popup is showing over the input box.
    Popup,
    /// The side editor has the focus.
    Editor,
    /// The side editor shows `file changed on disk: r reload / k keep mine`.
    Conflict,
    /// The side editor offers the unsaved edits of an interrupted review: `r` restore / `d` discard.
    Restore,
    /// Esc in the side editor with unsaved edits asks: `s` save / `d` discard / Esc keep editing.
    Unsaved,
    /// Esc in the side editor holding a presented plan asks what to do with it: `i` implement
    /// here / `f` in a fresh session / `p` keep planning / Esc keep editing.
    Plan,
    /// An approval prompt is waiting for an answer (and the input is empty).
    Approval,
    /// Ctrl-R: searching the input history.
    Search,
    /// The session picker (`/resume`, `--resume`) is open.
    Picker,
    /// The `@path` completion popup shows over the input box.
    Mention,
    /// `/jobs`'s list of background jobs is open.
    Jobs,
}

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Send the input (or run the slash command).
    Send,
    /// Insert a newline in the input.
    Newline,
    /// Previous history entry (only when the cursor is on the first line).
    HistoryPrev,
    /// Next history entry (only when the cursor is on the last line).
    HistoryNext,
    /// Abort what runs: a stream, a tool, a handoff being written (on an empty input with
    /// messages queued, drop the newest of them first).
    Abort,
    /// Clear the input, else drop the newest queued message, else interrupt the turn; on an idle
    /// empty input a second press within 1 s quits.
    ClearOrQuit,
    /// Scroll the chat up a page.
    ScrollUp,
    /// Scroll the chat down a page.
    ScrollDown,
    /// Move the focus between the input and the side editor.
    ToggleFocus,
    /// Save the side editor's buffer (ends the review window).
    Save,
    /// Open the handoff file in `$EDITOR`.
    ExternalEditor,
    /// Expand or collapse the selected tool output (the newest when none is selected).
    ToggleTool,
    /// Show the hooks that ran quietly (folded out of the chat).
    ShowQuietHooks,
    /// Capture the mouse (clicks, the wheel as events) or leave it to the terminal.
    ToggleMouse,
    /// Select the tool cell before the selected one (or the newest).
    SelectPrevTool,
    /// Select the tool cell after the selected one.
    SelectNextTool,
    /// Jump to the top of the chat (Home: only while the input is empty).
    ChatTop,
    /// Jump to the bottom of the chat and follow it (End: only while the input is empty).
    ChatBottom,
    /// Scroll the approval prompt's command or diff up a line.
    ApprovalUp,
    /// Scroll the approval prompt's command or diff down a line.
    ApprovalDown,
    /// Ctrl-R: search the input history backwards.
    HistorySearch,
    /// Ctrl-V: paste an image from the clipboard (as an `@path` of the saved image).
    PasteImage,
    /// Ctrl-R again: the next older match.
    SearchOlder,
    /// Put the match into the input.
    SearchAccept,
    /// Leave the search; the input is as it was.
    SearchCancel,
    /// The next session in the picker.
    PickerNext,
    /// The previous session in the picker.
    PickerPrev,
    /// The first row of the picker.
    PickerFirst,
    /// The last row of the picker.
    PickerLast,
    /// Continue the highlighted session.
    PickerChoose,
    /// Close the picker.
    PickerClose,
    /// The next file in the `@` popup.
    MentionNext,
    /// The previous file in the `@` popup.
    MentionPrev,
    /// Put the highlighted file into the input (`@path `).
    MentionComplete,
    /// Close the `@` popup.
    MentionClose,
    /// Next match in the slash popup.
    PopupNext,
    /// Previous match in the slash popup.
    PopupPrev,
    /// Complete the selected slash command.
    PopupComplete,
    /// Close the slash popup.
    PopupClose,
    /// Esc in the side editor: end the review with the file as it is on disk; after the review,
    /// abort what runs, or else close the editor. With unsaved edits it asks first.
    EditorEscape,
    /// Allow the pending tool call once.
    ApproveOnce,
    /// Allow this tool for the rest of the session.
    ApproveAlways,
    /// Deny the pending tool call.
    Deny,
    /// Reload the editor buffer from disk.
    Reload,
    /// Keep the editor buffer and ignore the change on disk.
    KeepMine,
    /// Put the offered unsaved edits of an interrupted review into the editor.
    RestoreUnsaved,
    /// Discard the offered unsaved edits (their file is removed).
    DiscardUnsaved,
    /// Stop writing the handoff document in the background; the main turn goes on.
    CancelHandoff,
    /// The unsaved-edits question: save them (then the review ends, or the editor closes).
    SaveEdits,
    /// The unsaved-edits question: discard them (then the review ends, or the editor closes).
    DiscardEdits,
    /// The unsaved-edits question: go back to editing.
    KeepEditing,
    /// The side editor's cursor to the start of the document.
    EditorTop,
    /// The side editor's cursor to the end of the document.
    EditorBottom,
    /// Shift-Tab: the next working mode (normal → accept edits → plan → normal).
    CycleMode,
    /// The plan question: implement the plan in this session.
    ImplementHere,
    /// The plan question: implement it in a fresh session that starts from the plan file.
    ImplementFresh,
    /// The plan question: keep planning (the editor closes, the plan file stays).
    KeepPlanning,
    /// The next job in `/jobs`'s list (in a job's output: a line down).
    JobsNext,
    /// The previous job (in a job's output: a line up).
    JobsPrev,
    /// Show the chosen job's output in place of the list.
    JobsOutput,
    /// Stop the chosen job.
    JobsStop,
    /// Close the list (from a job's output: back to the list).
    JobsClose,
}

/// A key with its modifiers. For character keys Shift is ignored when matching (`A` is Shift-a).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    /// The key.
    pub(crate) code: KeyCode,
    /// Ctrl, Alt, Shift (others are ignored when matching).
    pub(crate) mods: KeyModifiers,
}

/// One row of the key table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Binding {
    /// Where it applies.
    pub(crate) context: Context,
    /// The key that triggers it.
    pub(crate) key: Key,
    /// What it does.
    pub(crate) action: Action,
    /// The line in `/help`.
    pub(crate) desc: &'static str,
    /// The short footer hint, if this binding is worth one.
    pub(crate) hint: Option<&'static str>,
}

const fn k(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::NONE,
    }
}

const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::CONTROL,
    }
}

const fn ctrl_key(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::CONTROL,
    }
}

const fn alt(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::ALT,
    }
}

const fn shift(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::SHIFT,
    }
}

const fn b(
    context: Context,
    key: Key,
    action: Action,
    desc: &'static str,
    hint: Option<&'static str>,
) -> Binding {
    Binding {
        context,
        key,
        action,
        desc,
        hint,
    }
}

use Action as A;
use Context as C;

/// The key table.
#[rustfmt::skip]
pub(crate) const KEYMAP: &[Binding] = &[
    // No Enter: a message being sent when the prompt appears must not allow a tool call.
    b(C::Approval, k(KeyCode::Char('y')), A::ApproveOnce, "allow the tool call once", Some("once")),
    b(C::Approval, k(KeyCode::Char('a')), A::ApproveAlways, "always allow this tool this session", Some("always")),
    b(C::Approval, k(KeyCode::Char('n')), A::Deny, "deny the tool call", Some("deny")),
    b(C::Approval, k(KeyCode::Esc), A::Deny, "deny the tool call", Some("deny")),
    b(C::Approval, k(KeyCode::Up), A::ApprovalUp, "scroll the command or diff up", None),
    b(C::Approval, k(KeyCode::Down), A::ApprovalDown, "scroll the command or diff down", None),
    b(C::Search, ctrl('r'), A::SearchOlder, "the next older match", Some("older")),
    b(C::Search, k(KeyCode::Enter), A::SearchAccept, "put the match into the input", Some("accept")),
    b(C::Search, k(KeyCode::Tab), A::SearchAccept, "put the match into the input", None),
    b(C::Search, k(KeyCode::Esc), A::SearchCancel, "leave the search, input unchanged", Some("cancel")),
    b(C::Search, ctrl('g'), A::SearchCancel, "leave the search, input unchanged", None),
    b(C::Search, ctrl('c'), A::SearchCancel, "leave the search, input unchanged", None),
    b(C::Picker, k(KeyCode::Down), A::PickerNext, "next session or model", None),
    b(C::Picker, k(KeyCode::Up), A::PickerPrev, "previous session or model", None),
    b(C::Picker, k(KeyCode::Home), A::PickerFirst, "the first row", None),
    b(C::Picker, k(KeyCode::End), A::PickerLast, "the last row", None),
    b(C::Picker, k(KeyCode::Enter), A::PickerChoose, "continue the session, or use the model", Some("choose")),
    b(C::Picker, k(KeyCode::Esc), A::PickerClose, "close the list", Some("close")),
    b(C::Jobs, k(KeyCode::Down), A::JobsNext, "next job (in its output: a line down)", None),
    b(C::Jobs, k(KeyCode::Up), A::JobsPrev, "previous job (in its output: a line up)", None),
    b(C::Jobs, k(KeyCode::Enter), A::JobsOutput, "show the job's last lines (kept fresh while it runs)", Some("output")),
    b(C::Jobs, k(KeyCode::Char('o')), A::JobsOutput, "show the job's last lines (kept fresh while it runs)", Some("output")),
    b(C::Jobs, k(KeyCode::Char('s')), A::JobsStop, "stop the job (SIGTERM to its processes, SIGKILL after the grace period)", Some("stop")),
    b(C::Jobs, k(KeyCode::Delete), A::JobsStop, "stop the job (SIGTERM to its processes, SIGKILL after the grace period)", Some("stop")),
    b(C::Jobs, k(KeyCode::Esc), A::JobsClose, "close the list (from a job's output: back to the list)", Some("close")),
    b(C::Mention, k(KeyCode::Down), A::MentionNext, "next file", None),
    b(C::Mention, k(KeyCode::Up), A::MentionPrev, "previous file", None),
    b(C::Mention, k(KeyCode::Tab), A::MentionComplete, "put the file into the message (attached when sent)", Some("attach")),
    b(C::Mention, k(KeyCode::Enter), A::MentionComplete, "put the file into the message (attached when sent)", None),
    b(C::Mention, k(KeyCode::Esc), A::MentionClose, "close the file list", None),
    b(C::Conflict, k(KeyCode::Char('r')), A::Reload, "reload the file changed on disk", Some("reload")),
    b(C::Conflict, k(KeyCode::Char('k')), A::KeepMine, "keep your edits, ignore the disk change", Some("keep mine")),
    b(C::Restore, k(KeyCode::Char('r')), A::RestoreUnsaved, "restore the unsaved edits of the interrupted review", Some("restore")),
    b(C::Restore, k(KeyCode::Char('d')), A::DiscardUnsaved, "discard them (their file is removed)", Some("discard")),
    b(C::Unsaved, k(KeyCode::Char('s')), A::SaveEdits, "save the unsaved edits (the review ends, or the editor closes)", Some("save")),
    b(C::Unsaved, k(KeyCode::Char('d')), A::DiscardEdits, "discard them (the review ends, or the editor closes)", Some("discard")),
    b(C::Unsaved, k(KeyCode::Esc), A::KeepEditing, "keep editing", Some("keep editing")),
    b(C::Plan, k(KeyCode::Char('i')), A::ImplementHere, "implement the plan in this session", Some("implement here")),
    b(C::Plan, k(KeyCode::Char('f')), A::ImplementFresh, "implement the plan in a fresh session that starts from its file", Some("fresh session")),
    b(C::Plan, k(KeyCode::Char('p')), A::KeepPlanning, "keep planning (the editor closes, the plan file stays)", Some("keep planning")),
    b(C::Plan, k(KeyCode::Esc), A::KeepEditing, "keep editing the plan", Some("keep editing")),
    b(C::Popup, k(KeyCode::Down), A::PopupNext, "next command", None),
    b(C::Popup, k(KeyCode::Up), A::PopupPrev, "previous command", None),
    b(C::Popup, k(KeyCode::Tab), A::PopupComplete, "complete the command", Some("complete")),
    b(C::Popup, k(KeyCode::Esc), A::PopupClose, "close the command list", None),
    b(C::Input, k(KeyCode::Enter), A::Send, "send the message or run the /command", Some("send")),
    b(C::Input, alt(KeyCode::Enter), A::Newline, "insert a newline", Some("newline")),
    b(C::Input, shift(KeyCode::Enter), A::Newline, "insert a newline", None),
    b(C::Input, ctrl('j'), A::Newline, "insert a newline", None),
    b(C::Input, k(KeyCode::Up), A::HistoryPrev, "previous message (on the first line)", None),
    b(C::Input, k(KeyCode::Down), A::HistoryNext, "next message (on the last line)", None),
    b(C::Input, k(KeyCode::Esc), A::Abort, "abort what runs (stream, tool, handoff); on an empty input, first drop the newest queued message, then cancel a background handoff", Some("abort")),
    b(C::Input, ctrl('r'), A::HistorySearch, "search the input history", None),
    b(C::Input, ctrl('v'), A::PasteImage, "paste an image from the clipboard", None),
    b(C::Input, k(KeyCode::Home), A::ChatTop, "the top of the chat (while the input is empty)", None),
    b(C::Input, k(KeyCode::End), A::ChatBottom, "the bottom of the chat (while the input is empty)", None),
    b(C::Editor, ctrl('s'), A::Save, "save the handoff file and continue", Some("save")),
    b(C::Editor, k(KeyCode::Esc), A::EditorEscape, "review: continue with the file (unsaved edits: asks first); after: abort what runs, else close", Some("done")),
    b(C::Editor, ctrl_key(KeyCode::Home), A::EditorTop, "the start of the document", None),
    b(C::Editor, ctrl_key(KeyCode::End), A::EditorBottom, "the end of the document", None),
    b(C::Global, k(KeyCode::BackTab), A::CycleMode, "the next mode: normal → accept edits (file edits run unasked) → plan (read-only, ends in a plan) → normal", Some("mode")),
    b(C::Global, ctrl('c'), A::ClearOrQuit, "clear the input, else drop the newest queued message, else interrupt the turn; twice within 1 s on an idle empty input quits", Some("quit")),
    b(C::Global, k(KeyCode::PageUp), A::ScrollUp, "scroll the chat up", None),
    b(C::Global, k(KeyCode::PageDown), A::ScrollDown, "scroll the chat down", Some("scroll")),
    b(C::Global, ctrl('o'), A::ToggleFocus, "move the focus between input and editor", Some("focus")),
    b(C::Global, ctrl('e'), A::ExternalEditor, "open the handoff file in $EDITOR", None),
    b(C::Global, ctrl('t'), A::ToggleTool, "expand or collapse the selected tool output (else the newest; subagents: their transcripts)", None),
    b(C::Global, alt(KeyCode::Char('h')), A::ShowQuietHooks, "show the hooks that ran quietly (succeeded, gave the model nothing; their count is in the status line)", None),
    b(C::Global, alt(KeyCode::Char('m')), A::ToggleMouse, "capture the mouse (clicks select tool calls, the wheel scrolls panes) or leave it to the terminal (its selection works; the default)", None),
    b(C::Global, alt(KeyCode::Up), A::SelectPrevTool, "select the previous tool call (a click selects one too)", None),
    b(C::Global, alt(KeyCode::Down), A::SelectNextTool, "select the next tool call", None),
    b(C::Global, ctrl_key(KeyCode::Home), A::ChatTop, "the top of the chat", None),
    b(C::Global, ctrl_key(KeyCode::End), A::ChatBottom, "the bottom of the chat", None),
    // Esc does the same first (then, pressed again, interrupts the turn); this key never
    // touches the main turn.
    b(C::Global, ctrl('g'), A::CancelHandoff, "cancel the handoff being written in the background (the turn goes on)", None),
];

fn matches(key: &Key, ev: &KeyEvent) -> bool {
    if key.code != ev.code {
        return false;
    }
    let relevant = KeyModifiers::SHIFT | KeyModifiers::CONTROL | KeyModifiers::ALT;
    let mut mods = ev.modifiers & relevant;
    // Shift-Tab arrives as BackTab, with or without Shift as the terminal sends it.
    if matches!(ev.code, KeyCode::Char(_) | KeyCode::BackTab) {
        mods.remove(KeyModifiers::SHIFT);
    }
    mods == key.mods
}

/// The action bound to `ev` in the first of `contexts` that binds it (contexts in priority order).
/// Key releases never match.
pub(crate) fn lookup(contexts: &[Context], ev: &KeyEvent) -> Option<Action> {
    if ev.kind == KeyEventKind::Release {
        return None;
    }
    contexts.iter().find_map(|ctx| {
        KEYMAP
            .iter()
            .find(|bnd| bnd.context == *ctx && matches(&bnd.key, ev))
            .map(|bnd| bnd.action)
    })
}

/// A key as people write it: `Enter`, `Alt-Enter`, `Ctrl-C`, `PgUp`, `y`.
pub(crate) fn key_label(key: &Key) -> String {
    let mut out = String::new();
    if key.mods.contains(KeyModifiers::CONTROL) {
        out.push_str("Ctrl-");
    }
    if key.mods.contains(KeyModifiers::ALT) {
        out.push_str("Alt-");
    }
    if key.mods.contains(KeyModifiers::SHIFT) {
        out.push_str("Shift-");
    }
    let name = match key.code {
        KeyCode::Enter => "Enter".to_string(),
        KeyCode::Esc => "Esc".to_string(),
        KeyCode::Tab => "Tab".to_string(),
        KeyCode::BackTab => "Shift-Tab".to_string(),
        KeyCode::Up => "Up".to_string(),
        KeyCode::Down => "Down".to_string(),
        KeyCode::PageUp => "PgUp".to_string(),
        KeyCode::PageDown => "PgDn".to_string(),
        KeyCode::Home => "Home".to_string(),
        KeyCode::End => "End".to_string(),
        KeyCode::Char(c) if key.mods.contains(KeyModifiers::CONTROL) => {
            c.to_ascii_uppercase().to_string()
        }
        KeyCode::Char(c) => c.to_string(),
        other => format!("{other:?}"),
    };
    out.push_str(&name);
    out
}

/// The label of the first key bound to `action`, as `/help` writes it (`Ctrl-S`, `Esc`, `y`).
/// Every key named on screen comes from here, so a changed binding changes every mention.
pub(crate) fn label_for(action: Action) -> String {
    KEYMAP
        .iter()
        .find(|bnd| bnd.action == action)
        .map_or_else(String::new, |bnd| key_label(&bnd.key))
}

/// [`label_for`] in the footer's lower case (`ctrl-s`, `esc`).
pub(crate) fn short_label_for(action: Action) -> String {
    label_for(action).to_lowercase()
}

/// A footer hint: the keys (`n/esc`), what they do, and the action of the first of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hint {
    /// The keys, lower case, `/` between them.
    pub(crate) keys: String,
    /// What they do.
    pub(crate) text: &'static str,
    /// The action bound to them.
    pub(crate) action: Action,
}

/// The footer hints for the live contexts, in table order, one per hint text. Keys of one
/// context with the same hint share it (`n/esc deny`); a hint a more specific context already
/// gave is not repeated.
pub(crate) fn hints(contexts: &[Context]) -> Vec<Hint> {
    let mut out: Vec<(Hint, Context)> = Vec::new();
    for (i, ctx) in contexts.iter().enumerate() {
        let before = contexts.get(..i).unwrap_or_default();
        for bnd in KEYMAP.iter().filter(|bnd| bnd.context == *ctx) {
            let Some(text) = bnd.hint else { continue };
            // A key a more specific context binds does something else here.
            let shadowed = KEYMAP
                .iter()
                .any(|o| before.contains(&o.context) && o.key == bnd.key);
            if shadowed {
                continue;
            }
            let label = key_label(&bnd.key).to_lowercase();
            match out.iter_mut().find(|(h, _)| h.text == text) {
                Some((h, c)) if *c == *ctx => {
                    h.keys.push('/');
                    h.keys.push_str(&label);
                }
                Some(_) => {}
                None => out.push((
                    Hint {
                        keys: label,
                        text,
                        action: bnd.action,
                    },
                    *ctx,
                )),
            }
        }
    }
    out.into_iter().map(|(h, _)| h).collect()
}

/// The key section of `/help`: every binding, grouped by context, same action on one line.
pub(crate) fn help_lines() -> Vec<String> {
    let groups = [
        (C::Input, "input"),
        (C::Global, "anywhere"),
        (C::Editor, "side editor"),
        (C::Approval, "approval prompt"),
        (C::Conflict, "file changed on disk"),
        (C::Restore, "unsaved edits of an interrupted review"),
        (C::Unsaved, "Esc with unsaved edits in the side editor"),
        (C::Plan, "Esc in the side editor holding a plan"),
        (C::Popup, "command list"),
        (C::Search, "history search (Ctrl-R)"),
        (C::Picker, "session and model pickers (/resume, /model)"),
        (C::Mention, "file list (@path)"),
        (C::Jobs, "background jobs (/jobs)"),
    ];
    let mut out = Vec::new();
    for (ctx, title) in groups {
        out.push(format!("{title}:"));
        let mut rows: Vec<(String, &'static str)> = Vec::new();
        for bnd in KEYMAP.iter().filter(|bnd| bnd.context == ctx) {
            let label = key_label(&bnd.key);
            match rows.iter_mut().find(|(_, d)| *d == bnd.desc) {
                Some((keys, _)) => {
                    keys.push_str(" / ");
                    keys.push_str(&label);
                }
                None => rows.push((label, bnd.desc)),
            }
        }
        for (keys, desc) in rows {
            out.push(format!("  {keys:<22} {desc}"));
        }
    }
    out
}

#[cfg(test)]
#[path = "keymap_tests.rs"]
mod tests;
