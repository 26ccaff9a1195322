//! Hooks, custom slash commands and skills: the loaders and runners, and custom commands and
//! skills wired through the real binary (headless and in a pseudo-terminal).

mod commands;
mod home_setup;
mod hook_files;
mod hooks;
mod hooks_background;
mod hooks_engine;
mod hooks_handoff;
mod hooks_wired;
mod pty;
mod pty_settings;
mod read_rules;
mod skills;
mod wired;

/// Claude Code's names of our tools name tools that exist.
#[test]
fn claude_code_aliases_name_our_tools() {
    use flower_tui::engine::hooks::event::{claude_name, our_name};
    for (claude, ours) in [
        ("Bash", "bash"),
        ("Edit", "edit_file"),
        ("Write", "write_file"),
        ("Read", "read_file"),
        ("Grep", "grep"),
        ("Glob", "glob"),
        ("LS", "list_dir"),
    ] {
        assert!(flower_tui::engine::tools::is_known(ours), "{ours}");
        assert_eq!(our_name(claude), Some(ours));
        assert_eq!(claude_name(ours), Some(claude));
    }
    assert_eq!(
        our_name("Task"),
        Some(flower_tui::engine::subagent::TASK_TOOL)
    );
    assert_eq!(
        our_name("TodoWrite"),
        Some(flower_tui::engine::tools::todo::NAME)
    );
    assert_eq!(
        our_name("Skill"),
        Some(flower_tui::engine::skills::SKILL_TOOL)
    );
}
