//! What the servers found, as the model and the front ends read it: one line per problem
//! (`path:line:col severity message (source)`), and what a change did to its files' problems —
//! the errors it introduced (then warnings, capped), the ones it fixed, and how many were there
//! before (counted, not repeated).
//!
//! A change is compared with the file's diagnostics before it by what a problem says (severity,
//! message, source), not where: an edit above an old error moves it without making it new.

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;

/// New errors shown at most per change, warnings, and fixed errors.
const MAX_NEW_ERRORS: usize = 20;
const MAX_NEW_WARNINGS: usize = 5;
const MAX_GONE: usize = 5;
/// A message is cut to this many characters (its first line only).
const MESSAGE_CHARS: usize = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

impl Severity {
    pub fn word(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }
}

/// One problem a server reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The file, relative to the workspace when inside it.
    pub path: String,
    /// 1-based.
    pub line: u32,
    /// 1-based (in the server's units: UTF-16 code units).
    pub col: u32,
    pub severity: Severity,
    pub message: String,
    /// What produced it (`pyflakes`, `typescript`), when the server says.
    pub source: Option<String>,
}

impl Finding {
    /// From the protocol's diagnostic; a missing severity counts as an error.
    pub(crate) fn from_lsp(path: &str, d: &lsp_types::Diagnostic) -> Finding {
        use lsp_types::DiagnosticSeverity as S;
        let severity = match d.severity {
            Some(S::WARNING) => Severity::Warning,
            Some(S::INFORMATION) => Severity::Info,
            Some(S::HINT) => Severity::Hint,
            _ => Severity::Error,
        };
        let first = d
            .message
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let mut message: String = first.trim().chars().take(MESSAGE_CHARS).collect();
        if d.message.trim().lines().count() > 1 || first.chars().count() > MESSAGE_CHARS {
            message.push('…');
        }
        Finding {
            path: path.to_string(),
            line: d.range.start.line.saturating_add(1),
            col: d.range.start.character.saturating_add(1),
            severity,
            message,
            source: d.source.clone().filter(|s| !s.trim().is_empty()),
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    fn key(&self) -> (Severity, &str, Option<&str>) {
        (self.severity, &self.message, self.source.as_deref())
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{} {} {}",
            self.path,
            self.line,
            self.col,
            self.severity.word(),
            self.message
        )?;
        if let Some(s) = &self.source {
            write!(f, " ({s})")?;
        }
        Ok(())
    }
}

/// What the servers last said about the files they have open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenProblems {
    /// The files they answered for (paths as shown).
    pub files: Vec<String>,
    pub found: Vec<Finding>,
}

/// One file's problems before and after a change; `before` is None when the server had not
/// seen the file before (then all of its problems are listed, marked as a first look).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileChange {
    pub path: String,
    pub before: Option<Vec<Finding>>,
    pub after: Vec<Finding>,
}

/// What a change did to the problems of the files it changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChangeReport {
    /// The files the servers checked.
    pub checked: Vec<String>,
    /// Problems this change introduced: errors first, then warnings (capped).
    pub new: Vec<Finding>,
    /// New errors and warnings not listed.
    pub more_errors: usize,
    pub more_warnings: usize,
    /// Errors this change fixed (capped).
    pub gone: Vec<Finding>,
    pub more_gone: usize,
    /// Errors of these files that were there before the change (not repeated).
    pub kept_errors: usize,
    /// Files the servers saw for the first time: what was there before is unknown.
    pub first_look: Vec<String>,
    /// What kept a server from answering in time (starting, indexing, failed).
    pub notes: Vec<String>,
}

impl ChangeReport {
    /// Compare each file's problems before and after.
    pub(crate) fn of(files: &[FileChange], notes: Vec<String>) -> ChangeReport {
        let mut r = ChangeReport {
            notes,
            ..ChangeReport::default()
        };
        let (mut errors, mut warnings, mut gone) = (Vec::new(), Vec::new(), Vec::new());
        for f in files {
            r.checked.push(f.path.clone());
            let before = f.before.clone().unwrap_or_else(|| {
                r.first_look.push(f.path.clone());
                Vec::new()
            });
            let (new, fixed) = difference(&before, &f.after);
            r.kept_errors += f.after.iter().filter(|x| x.is_error()).count()
                - new.iter().filter(|x| x.is_error()).count();
            for x in new {
                match x.severity {
                    Severity::Error => errors.push(x),
                    Severity::Warning => warnings.push(x),
                    Severity::Info | Severity::Hint => {}
                }
            }
            gone.extend(fixed.into_iter().filter(|x| x.is_error()));
        }
        r.more_errors = errors.len().saturating_sub(MAX_NEW_ERRORS);
        r.more_warnings = warnings.len().saturating_sub(MAX_NEW_WARNINGS);
        r.more_gone = gone.len().saturating_sub(MAX_GONE);
        r.new = errors.into_iter().take(MAX_NEW_ERRORS).collect();
        r.new.extend(warnings.into_iter().take(MAX_NEW_WARNINGS));
        r.gone = gone.into_iter().take(MAX_GONE).collect();
        r
    }

    /// Nothing checked and nothing to say.
    pub fn is_empty(&self) -> bool {
        self.checked.is_empty() && self.notes.is_empty()
    }

    /// The block appended to the tool result.
    pub fn text(&self) -> String {
        let mut out = String::from("Diagnostics after this change");
        let files = self.checked.join(", ");
        if self.new.is_empty() && self.more_errors == 0 && self.more_warnings == 0 {
            if !self.checked.is_empty() {
                out.push_str(&format!(": no new errors or warnings in {files}"));
            }
            out.push('\n');
        } else {
            out.push_str(&format!(" ({files}):\n"));
            for f in &self.new {
                out.push_str(&format!("{f}\n"));
            }
            for (n, what) in [(self.more_errors, "error"), (self.more_warnings, "warning")] {
                if n > 0 {
                    out.push_str(&format!("… and {n} more new {}\n", plural(n, what)));
                }
            }
        }
        if !self.first_look.is_empty() {
            out.push_str(&format!(
                "(first look at {}: these problems may predate the change)\n",
                self.first_look.join(", ")
            ));
        }
        for f in &self.gone {
            out.push_str(&format!("fixed: {f}\n"));
        }
        if self.more_gone > 0 {
            out.push_str(&format!("… and {} more fixed\n", self.more_gone));
        }
        if self.kept_errors > 0 {
            out.push_str(&format!(
                "{} {} in {} {} there before this change (not repeated).\n",
                self.kept_errors,
                plural(self.kept_errors, "error"),
                if self.checked.len() == 1 {
                    "this file"
                } else {
                    "these files"
                },
                if self.kept_errors == 1 { "was" } else { "were" },
            ));
        }
        for n in &self.notes {
            out.push_str(&format!("{n}\n"));
        }
        out.trim_end().to_string()
    }
}

/// `after`'s problems that `before` did not have, and `before`'s that `after` no longer has
/// (as many of each kind as there were).
fn difference(before: &[Finding], after: &[Finding]) -> (Vec<Finding>, Vec<Finding>) {
    let mut left: HashMap<_, usize> = HashMap::new();
    for b in before {
        *left.entry(b.key()).or_default() += 1;
    }
    let mut new = Vec::new();
    for a in after {
        match left.get_mut(&a.key()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => new.push(a.clone()),
        }
    }
    let mut still: HashMap<_, usize> = HashMap::new();
    for a in after {
        *still.entry(a.key()).or_default() += 1;
    }
    let mut gone = Vec::new();
    for b in before {
        match still.get_mut(&b.key()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => gone.push(b.clone()),
        }
    }
    (new, gone)
}

pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// Every problem of some files, as the `diagnostics` tool answers: errors first, then warnings
/// (capped), then what kept a server from answering.
pub(crate) fn listing(files: &[String], found: &[Finding], notes: &[String]) -> String {
    const MAX_ERRORS: usize = 50;
    const MAX_WARNINGS: usize = 20;
    let errors: Vec<&Finding> = found.iter().filter(|f| f.is_error()).collect();
    let warnings: Vec<&Finding> = found
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .collect();
    let mut out = if files.is_empty() {
        "No file of a language with a language server to check.".to_string()
    } else {
        format!(
            "{} {}, {} {} in {}",
            errors.len(),
            plural(errors.len(), "error"),
            warnings.len(),
            plural(warnings.len(), "warning"),
            files.join(", ")
        )
    };
    out.push('\n');
    for f in errors.iter().take(MAX_ERRORS) {
        out.push_str(&format!("{f}\n"));
    }
    for f in warnings.iter().take(MAX_WARNINGS) {
        out.push_str(&format!("{f}\n"));
    }
    let hidden =
        errors.len().saturating_sub(MAX_ERRORS) + warnings.len().saturating_sub(MAX_WARNINGS);
    if hidden > 0 {
        out.push_str(&format!("… and {hidden} more\n"));
    }
    for n in notes {
        out.push_str(&format!("{n}\n"));
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(line: u32, severity: Severity, message: &str) -> Finding {
        Finding {
            path: "a.py".into(),
            line,
            col: 1,
            severity,
            message: message.into(),
            source: Some("pyflakes".into()),
        }
    }

    #[test]
    fn a_change_is_told_what_it_introduced_and_fixed_not_what_was_there() {
        let before = vec![
            f(3, Severity::Error, "undefined name 'old'"),
            f(9, Severity::Error, "undefined name 'fixed'"),
            f(1, Severity::Warning, "'os' imported but unused"),
        ];
        // Lines moved down by two; one error fixed, one added, a warning added.
        let after = vec![
            f(5, Severity::Error, "undefined name 'old'"),
            f(7, Severity::Error, "undefined name 'fresh'"),
            f(1, Severity::Warning, "'os' imported but unused"),
            f(2, Severity::Warning, "'sys' imported but unused"),
            f(2, Severity::Hint, "unused"),
        ];
        let changes = [FileChange {
            path: "a.py".into(),
            before: Some(before),
            after,
        }];
        let r = ChangeReport::of(&changes, vec![]);
        assert_eq!(
            r.text(),
            "Diagnostics after this change (a.py):\n\
             a.py:7:1 error undefined name 'fresh' (pyflakes)\n\
             a.py:2:1 warning 'sys' imported but unused (pyflakes)\n\
             fixed: a.py:9:1 error undefined name 'fixed' (pyflakes)\n\
             1 error in this file was there before this change (not repeated)."
        );
    }

    #[test]
    fn a_clean_change_a_first_look_and_notes_say_so_in_a_line_each() {
        let clean = ChangeReport::of(
            &[FileChange {
                path: "b.ts".into(),
                before: Some(vec![]),
                after: vec![],
            }],
            vec!["typescript is still indexing".into()],
        );
        assert_eq!(
            clean.text(),
            "Diagnostics after this change: no new errors or warnings in b.ts\n\
             typescript is still indexing"
        );
        let first = ChangeReport::of(
            &[FileChange {
                path: "a.py".into(),
                before: None,
                after: vec![f(1, Severity::Error, "x")],
            }],
            vec![],
        );
        assert_eq!(first.first_look, ["a.py"]);
        assert!(
            first
                .text()
                .contains("(first look at a.py: these problems may predate")
        );
    }

    #[test]
    fn many_new_problems_are_capped_errors_first() {
        let after: Vec<Finding> = (1..=30)
            .map(|n| f(n, Severity::Warning, &format!("w{n}")))
            .chain((1..=25).map(|n| f(n, Severity::Error, &format!("e{n}"))))
            .collect();
        let r = ChangeReport::of(
            &[FileChange {
                path: "a.py".into(),
                before: Some(vec![]),
                after,
            }],
            vec![],
        );
        assert_eq!(r.new.len(), 25);
        assert!(r.new[..20].iter().all(Finding::is_error));
        assert_eq!((r.more_errors, r.more_warnings), (5, 25));
        assert!(
            r.text()
                .ends_with("… and 5 more new errors\n… and 25 more new warnings")
        );
    }

    #[test]
    fn a_protocol_diagnostic_becomes_one_line() {
        let d = lsp_types::Diagnostic {
            range: lsp_types::Range::new(
                lsp_types::Position::new(2, 4),
                lsp_types::Position::new(2, 9),
            ),
            severity: None,
            message: "Type 'string' is not assignable\n  to type 'number'.".into(),
            source: Some("ts".into()),
            ..Default::default()
        };
        assert_eq!(
            Finding::from_lsp("src/a.ts", &d).to_string(),
            "src/a.ts:3:5 error Type 'string' is not assignable… (ts)"
        );
    }
}
