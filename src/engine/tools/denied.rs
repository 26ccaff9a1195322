//! What the settings files' `deny` rules forbid, as the tools are given it with their context
//! (the rules themselves live above the tools; this is only the questions they answer):
//!
//! - **Reading a path** (`Read` deny rules): `read_file` refuses such a file (also for an `@file`
//!   attachment, which reads through it); `grep`, `glob` and `list_dir` over a folder holding one
//!   leave it out (neither its contents nor its name come out) and say how many they left out.
//! - **A whole call** (every deny rule): what a caller that judges no approval of its own (a
//!   subagent) refuses before running the call.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

/// The rule that forbids reading a path, as written; None: it may be read.
type PathJudge = dyn Fn(&Path) -> Option<String> + Send + Sync;
/// The rule that refuses a call (tool name, input), as written; None: no rule refuses it.
type CallJudge = dyn Fn(&str, &Value) -> Option<String> + Send + Sync;

/// What the deny rules forbid (nothing by default).
#[derive(Clone, Default)]
pub struct Denied {
    reading: Option<Arc<PathJudge>>,
    calls: Option<Arc<CallJudge>>,
}

impl Denied {
    /// Reading the paths `reading` names a rule for is forbidden, and the calls `calls` names one
    /// for are refused.
    pub fn new(
        reading: impl Fn(&Path) -> Option<String> + Send + Sync + 'static,
        calls: impl Fn(&str, &Value) -> Option<String> + Send + Sync + 'static,
    ) -> Denied {
        Denied {
            reading: Some(Arc::new(reading)),
            calls: Some(Arc::new(calls)),
        }
    }

    /// The rule that forbids reading `path` (absolute), as written.
    pub fn reading(&self, path: &Path) -> Option<String> {
        self.reading.as_ref().and_then(|judge| judge(path))
    }

    /// The rule that refuses the call of `name` with `input`, as written.
    pub fn call(&self, name: &str, input: &Value) -> Option<String> {
        self.calls.as_ref().and_then(|judge| judge(name, input))
    }

    /// What the model is told when `shown` may not be read because of `rule`.
    pub fn refusal(shown: &str, rule: &str) -> String {
        format!(
            "{shown} may not be read: denied by the permission rule `{rule}` in the user's or the \
             workspace's settings; do not try to read it another way."
        )
    }

    /// The note a search ends with when it left `n` entries out.
    pub fn left_out(n: usize) -> String {
        format!(
            "({n} file(s) left out: a permission rule in the settings denies reading them; their \
             names and contents are not shown.)"
        )
    }
}

impl fmt::Debug for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Denied")
            .field("reading", &self.reading.is_some())
            .field("calls", &self.calls.is_some())
            .finish()
    }
}

fn same<T: ?Sized>(a: &Option<Arc<T>>, b: &Option<Arc<T>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

/// Two are equal when they are the same rules (or both none).
impl PartialEq for Denied {
    fn eq(&self, other: &Denied) -> bool {
        same(&self.reading, &other.reading) && same(&self.calls, &other.calls)
    }
}

impl Eq for Denied {}
