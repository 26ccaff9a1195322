//! A subagent's report as the parent gets it: the child's own last reply, or — when it could not
//! write one (its context overflowed, a request failed, the user stopped it) — a report flower-tui
//! puts together from what the child read and ran.

use super::SubagentOutcome;
use crate::engine::text::{one_line, truncate_chars};

/// Calls listed in a mechanical report; the rest are counted.
const LISTED_CALLS: usize = 60;
/// Characters of the child's last words quoted in a mechanical report.
const LAST_WORDS: usize = 2_000;

/// One call a child made, for its mechanical report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CallNote {
    /// `read_file: src/a.rs:1-40`.
    pub summary: String,
    /// None while it runs (or if it never returned).
    pub failed: Option<bool>,
}

/// Why the child is asked for its report before it is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EarlyStop {
    /// Its context reached its handoff line.
    ContextFull,
    /// Its iteration budget is spent.
    Budget { n: u32, max: u32 },
}

impl EarlyStop {
    pub(super) fn outcome(self) -> SubagentOutcome {
        match self {
            EarlyStop::ContextFull => SubagentOutcome::ContextFull,
            EarlyStop::Budget { n, max } => SubagentOutcome::MaxIterations { n, max },
        }
    }

    /// The last user message of the child: write the report now, without tools.
    pub(super) fn ask(self) -> String {
        let why = match self {
            EarlyStop::ContextFull => "Your context window is nearly full".to_string(),
            EarlyStop::Budget { n, max } => {
                format!("You have used your iteration budget ({n}/{max})")
            }
        };
        format!(
            "{why}, so you must stop now. Do not call tools. Write your report to the parent \
             agent from what you have: what you found (with file paths and line numbers), what \
             you could not finish, and where to look next."
        )
    }
}

/// What the parent's `task` call returns, by how the child ended. `reply` is the child's last
/// reply (its report when it wrote one); `mechanical` builds the fallback.
pub(super) fn result_text(
    outcome: SubagentOutcome,
    reply: Option<&str>,
    mechanical: impl FnOnce(&str) -> String,
) -> String {
    let reply = reply.map(str::trim).filter(|r| !r.is_empty());
    match (outcome, reply) {
        (SubagentOutcome::Completed, Some(r)) => r.to_string(),
        (SubagentOutcome::Completed, None) => mechanical("it ended without writing a report"),
        (SubagentOutcome::ContextFull, Some(r)) => format!(
            "[The subagent's context filled up before it was done; it wrote this report then.]\n\n{r}"
        ),
        (SubagentOutcome::MaxIterations { n, max }, Some(r)) => format!(
            "[The subagent used its iteration budget ({n}/{max}) before it was done; it wrote \
             this report then.]\n\n{r}"
        ),
        (SubagentOutcome::ContextFull, None) => {
            mechanical("its context filled up and it wrote no report when asked")
        }
        (SubagentOutcome::MaxIterations { n, max }, None) => mechanical(&format!(
            "it used its iteration budget ({n}/{max}) and wrote no report when asked"
        )),
        (SubagentOutcome::Overflow, _) => {
            mechanical("the provider said its context window was exceeded")
        }
        (SubagentOutcome::Interrupted, _) => mechanical("the user interrupted it"),
        (SubagentOutcome::Error(kind), _) => {
            mechanical(&format!("a request failed ({kind}) after its retries"))
        }
    }
}

/// The report flower-tui writes for a child that could not: why, what it did, its last words.
pub(super) fn mechanical(
    description: &str,
    why: &str,
    calls: &[CallNote],
    last_text: &str,
    detail: Option<&str>,
) -> String {
    let mut out = format!(
        "[This report was put together by flower-tui, not written by the subagent: {why}.]\n\
         Task: {}\n",
        one_line(description, 200)
    );
    if let Some(d) = detail.map(str::trim).filter(|d| !d.is_empty()) {
        out.push_str(&format!("Error: {}\n", one_line(d, 500)));
    }
    if calls.is_empty() {
        out.push_str("It made no tool calls.\n");
    } else {
        out.push_str(&format!(
            "What it read and ran ({} tool call{}):\n",
            calls.len(),
            if calls.len() == 1 { "" } else { "s" }
        ));
        for c in calls.iter().take(LISTED_CALLS) {
            let mark = match c.failed {
                Some(true) => " (failed)",
                Some(false) => "",
                None => " (did not finish)",
            };
            out.push_str(&format!("- {}{mark}\n", one_line(&c.summary, 200)));
        }
        if calls.len() > LISTED_CALLS {
            out.push_str(&format!("- … and {} more\n", calls.len() - LISTED_CALLS));
        }
    }
    let last = last_text.trim();
    if !last.is_empty() {
        out.push_str("Its last words:\n");
        out.push_str(&truncate_chars(last, LAST_WORDS));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(summary: &str, failed: Option<bool>) -> CallNote {
        CallNote {
            summary: summary.into(),
            failed,
        }
    }

    #[test]
    fn a_mechanical_report_lists_what_it_did() {
        let calls = vec![
            call("read_file: src/a.rs", Some(false)),
            call("grep: /foo/ in src", Some(true)),
            call("read_file: src/b.rs", None),
        ];
        let r = mechanical(
            "find foo",
            "the user interrupted it",
            &calls,
            "Looking at b next.",
            None,
        );
        assert_eq!(
            r,
            "[This report was put together by flower-tui, not written by the subagent: the user \
             interrupted it.]\nTask: find foo\nWhat it read and ran (3 tool calls):\n- read_file: \
             src/a.rs\n- grep: /foo/ in src (failed)\n- read_file: src/b.rs (did not finish)\n\
             Its last words:\nLooking at b next.\n"
        );
        let many: Vec<CallNote> = (0..70)
            .map(|i| call(&format!("read_file: f{i}"), Some(false)))
            .collect();
        let r = mechanical("t", "why", &many, "", Some("HTTP 500"));
        assert!(r.contains("Error: HTTP 500\n"));
        assert!(r.contains("- read_file: f59\n- … and 10 more\n"), "{r}");
        assert!(!r.contains("f60"));
        assert!(!r.contains("last words"));
        assert!(mechanical("t", "why", &[], "", None).contains("It made no tool calls."));
    }

    #[test]
    fn the_result_is_the_reply_or_a_marked_fallback() {
        let mech = |why: &str| format!("M({why})");
        assert_eq!(
            result_text(SubagentOutcome::Completed, Some(" found it \n"), mech),
            "found it"
        );
        assert_eq!(
            result_text(SubagentOutcome::Completed, Some("  "), mech),
            "M(it ended without writing a report)"
        );
        let full = result_text(SubagentOutcome::ContextFull, Some("partial"), mech);
        assert!(full.starts_with("[The subagent's context filled up") && full.ends_with("partial"));
        let budget = result_text(
            SubagentOutcome::MaxIterations { n: 5, max: 5 },
            Some("so far"),
            mech,
        );
        assert!(budget.contains("(5/5)") && budget.ends_with("so far"));
        assert_eq!(
            result_text(SubagentOutcome::Overflow, Some("ignored"), mech),
            "M(the provider said its context window was exceeded)"
        );
        assert_eq!(
            result_text(SubagentOutcome::Interrupted, None, mech),
            "M(the user interrupted it)"
        );
        let e = crate::engine::error::ErrorKind::Provider(crate::engine::provider::ErrorKind::Auth);
        assert!(result_text(SubagentOutcome::Error(e), None, mech).contains("(auth)"));
        assert!(EarlyStop::Budget { n: 3, max: 3 }.ask().contains("(3/3)"));
        assert!(EarlyStop::ContextFull.ask().contains("Do not call tools"));
    }
}
