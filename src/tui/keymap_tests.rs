//! The key table: lookups by context, modifiers, labels, hints and `/help` from the table, a
//! key for every action.

use super::*;

fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, mods)
}

#[test]
fn lookup_respects_context_priority() {
    let esc = ev(KeyCode::Esc, KeyModifiers::NONE);
    assert_eq!(lookup(&[C::Approval, C::Global], &esc), Some(A::Deny));
    assert_eq!(
        lookup(&[C::Popup, C::Input, C::Global], &esc),
        Some(A::PopupClose)
    );
    assert_eq!(lookup(&[C::Input, C::Global], &esc), Some(A::Abort));
    assert_eq!(lookup(&[C::Editor, C::Global], &esc), Some(A::EditorEscape));
}

#[test]
fn modifiers_must_match_except_shift_on_chars() {
    let enter = |m| lookup(&[C::Input], &ev(KeyCode::Enter, m));
    assert_eq!(enter(KeyModifiers::NONE), Some(A::Send));
    assert_eq!(enter(KeyModifiers::ALT), Some(A::Newline));
    assert_eq!(enter(KeyModifiers::SHIFT), Some(A::Newline));
    assert_eq!(enter(KeyModifiers::CONTROL), None);
    let y = ev(KeyCode::Char('Y'), KeyModifiers::SHIFT);
    assert_eq!(
        lookup(&[C::Approval], &ev(KeyCode::Char('y'), KeyModifiers::NONE)),
        Some(A::ApproveOnce)
    );
    assert_eq!(lookup(&[C::Approval], &y), None, "Y is not y");
    let ctrl_c = ev(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(lookup(&[C::Global], &ctrl_c), Some(A::ClearOrQuit));
    let plain_c = ev(KeyCode::Char('c'), KeyModifiers::NONE);
    assert_eq!(lookup(&[C::Input, C::Global], &plain_c), None);
}

#[test]
fn releases_never_match() {
    let mut e = ev(KeyCode::Enter, KeyModifiers::NONE);
    e.kind = KeyEventKind::Release;
    assert_eq!(lookup(&[C::Input], &e), None);
}

#[test]
fn labels_hints_and_help_come_from_the_table() {
    assert_eq!(key_label(&ctrl('c')), "Ctrl-C");
    assert_eq!(key_label(&alt(KeyCode::Enter)), "Alt-Enter");
    assert_eq!(key_label(&k(KeyCode::PageDown)), "PgDn");
    let pairs = |h: Vec<Hint>| -> Vec<(String, &'static str)> {
        h.into_iter().map(|h| (h.keys, h.text)).collect()
    };
    assert_eq!(
        pairs(hints(&[C::Approval])),
        [
            ("y".to_string(), "once"),
            ("a".to_string(), "always"),
            ("n/esc".to_string(), "deny")
        ]
    );
    assert_eq!(hints(&[C::Approval])[2].action, A::Deny);
    assert_eq!(label_for(A::Save), "Ctrl-S");
    assert_eq!(label_for(A::Newline), "Alt-Enter", "the first binding");
    assert_eq!(short_label_for(A::Abort), "esc");
    assert_eq!(
        lookup(&[C::Approval], &ev(KeyCode::Enter, KeyModifiers::NONE)),
        None,
        "Enter never answers an approval"
    );
    let h = pairs(hints(&[C::Input, C::Global]));
    assert_eq!(h[0], ("enter".to_string(), "send"));
    assert!(h.iter().any(|(k, v)| k == "ctrl-c" && *v == "quit"));
    assert!(
        !h.iter().any(|(_, v)| *v == "allow"),
        "approval hints only in approval"
    );
    let help = help_lines().join("\n");
    assert!(help.contains("Alt-Enter / Shift-Enter / Ctrl-J"), "{help}");
    assert!(help.contains("Ctrl-S"));
    // Every binding appears in /help.
    for bnd in KEYMAP {
        assert!(help.contains(bnd.desc), "{} missing", bnd.desc);
    }
}

#[test]
fn every_action_has_a_key_to_name() {
    use Action::*;
    let all = [
        Send,
        Newline,
        HistoryPrev,
        HistoryNext,
        Abort,
        ClearOrQuit,
        ScrollUp,
        ScrollDown,
        ToggleFocus,
        Save,
        ExternalEditor,
        ToggleTool,
        ShowQuietHooks,
        ToggleMouse,
        PopupNext,
        PopupPrev,
        PopupComplete,
        PopupClose,
        EditorEscape,
        ApproveOnce,
        ApproveAlways,
        Deny,
        Reload,
        KeepMine,
        SelectPrevTool,
        SelectNextTool,
        ChatTop,
        ChatBottom,
        ApprovalUp,
        ApprovalDown,
        HistorySearch,
        SearchOlder,
        SearchAccept,
        SearchCancel,
        RestoreUnsaved,
        DiscardUnsaved,
        PickerNext,
        PickerPrev,
        PickerFirst,
        PickerLast,
        PickerChoose,
        PickerClose,
        MentionNext,
        MentionPrev,
        MentionComplete,
        MentionClose,
        CancelHandoff,
        SaveEdits,
        DiscardEdits,
        KeepEditing,
        EditorTop,
        EditorBottom,
        CycleMode,
        ImplementHere,
        ImplementFresh,
        KeepPlanning,
        PasteImage,
        JobsNext,
        JobsPrev,
        JobsOutput,
        JobsStop,
        JobsClose,
    ];
    for a in all {
        // A new action fails to compile here until it is listed above.
        match a {
            Send | Newline | HistoryPrev | HistoryNext | Abort | ClearOrQuit | ScrollUp
            | ScrollDown | ToggleFocus | Save | ExternalEditor | ToggleTool | ShowQuietHooks
            | PopupNext | PopupPrev | PopupComplete | PopupClose | EditorEscape | ApproveOnce
            | ApproveAlways | Deny | Reload | KeepMine | SelectPrevTool | SelectNextTool
            | ChatTop | ChatBottom | ApprovalUp | ApprovalDown | HistorySearch | SearchOlder
            | SearchAccept | SearchCancel | RestoreUnsaved | DiscardUnsaved | PickerNext
            | PickerPrev | PickerFirst | PickerLast | PickerChoose | PickerClose | MentionNext
            | MentionPrev | MentionComplete | MentionClose | CancelHandoff | SaveEdits
            | DiscardEdits | KeepEditing | EditorTop | EditorBottom | CycleMode | ImplementHere
            | ImplementFresh | KeepPlanning | PasteImage | ToggleMouse | JobsNext | JobsPrev
            | JobsOutput | JobsStop | JobsClose => {}
        }
        assert!(!label_for(a).is_empty(), "{a:?} has no key");
    }
}
