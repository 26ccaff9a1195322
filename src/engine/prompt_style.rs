//! The prompt a session starts with, full or lean. A small window cannot afford the full system
//! prompt and tool descriptions (together about 3,000 tokens, over a third of an 8K window): up to
//! [`LEAN_WINDOW`], or with `--lean`, sessions get `assets/system_prompt_lean.md` and the one-line
//! tool descriptions of `tools::lean_descriptions`. The choice is made once, at start.

use std::path::Path;

/// Windows up to this size get the lean prompt without being asked.
pub const LEAN_WINDOW: u64 = 32_768;

const FULL: &str = include_str!("../../assets/system_prompt.md");
const LEAN: &str = include_str!("../../assets/system_prompt_lean.md");

/// Which prompt the sessions get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptStyle {
    /// The full system prompt and tool descriptions.
    #[default]
    Full,
    /// The compact ones, for small windows.
    Lean,
}

impl PromptStyle {
    /// Lean when asked (`--lean`) or when the window is at most [`LEAN_WINDOW`].
    pub fn choose(asked: bool, window: u64) -> PromptStyle {
        if asked || window <= LEAN_WINDOW {
            PromptStyle::Lean
        } else {
            PromptStyle::Full
        }
    }

    /// The base system prompt for a workspace (the session adds its environment and the
    /// project instructions).
    pub fn base_prompt(self, workspace: &Path) -> String {
        let text = match self {
            PromptStyle::Full => FULL,
            PromptStyle::Lean => LEAN,
        };
        text.replace("{workspace}", &workspace.display().to_string())
    }

    /// Whether this is the lean prompt.
    pub fn is_lean(self) -> bool {
        self == PromptStyle::Lean
    }

    /// For `-v`.
    pub fn as_str(self) -> &'static str {
        match self {
            PromptStyle::Full => "full",
            PromptStyle::Lean => "lean",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_windows_and_the_flag_choose_lean() {
        let table = [
            (false, 8_192, PromptStyle::Lean),
            (false, 32_768, PromptStyle::Lean),
            (false, 32_769, PromptStyle::Full),
            (false, 200_000, PromptStyle::Full),
            (true, 200_000, PromptStyle::Lean),
        ];
        for (asked, window, style) in table {
            assert_eq!(
                PromptStyle::choose(asked, window),
                style,
                "{asked} {window}"
            );
        }
    }

    #[test]
    fn both_prompts_name_the_workspace_and_the_lean_one_is_small() {
        let ws = Path::new("/work/space");
        for style in [PromptStyle::Full, PromptStyle::Lean] {
            let p = style.base_prompt(ws);
            assert!(
                p.contains("/work/space") && !p.contains("{workspace}"),
                "{p}"
            );
            assert!(p.contains("handoff"), "{p}");
        }
        let full = PromptStyle::Full.base_prompt(ws).len();
        let lean = PromptStyle::Lean.base_prompt(ws).len();
        assert!(lean * 3 < full, "{lean} vs {full}");
    }
}
