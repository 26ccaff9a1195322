//! A custom command's `allowed-tools`, in Claude Code's syntax, as the approval grants they give
//! for the command's own turn:
//!
//! - `Bash(git status:*)` and `Bash(git status *)`: bash commands each of whose parts starts with
//!   `git status` (the same rule as an "always" given to `git status …`);
//! - `Bash(git status)`: exactly that command;
//! - `Edit`, `MultiEdit`, `Write` (or `edit_file`, `write_file`): that file tool inside the
//!   workspace;
//! - `mcp__server__tool`: that MCP tool;
//! - `WebFetch(domain:docs.rs)` (or `web_fetch(domain:…)`): `web_fetch` of pages on that host;
//! - `Read`, `Grep`, `Glob`, `LS` and their flower-tui names need no approval inside the
//!   workspace: nothing to grant.
//!
//! Not taken (each is named back so the user sees why a call is still asked for): `Bash` with no
//! command (every command, broader than a grant ever is), a prefix that "always" would not grant
//! either (a program that runs anything, `Bash(sh:*)`, `Bash(python3:*)`, or a subcommand tool
//! without its subcommand, `Bash(git:*)`), a file tool limited to paths (`Edit(src/**)`), a bash
//! pattern with `*` anywhere but at the end, and unknown tools. A path outside the workspace is
//! asked for call by call whatever the command says (`Bash(cp:*)` covers no `cp … /elsewhere`).
//!
//! A workspace's command file (`.flower/commands/`, `.claude/commands/`) grants nothing unless the
//! workspace's files are trusted (`mcp_json = "trust"`, the policy its hooks and `.mcp.json`
//! follow): a repository must not grant itself programs ([`Catalog::hold_unapproved_grants`],
//! applied at load).
//!
//! [`Catalog::hold_unapproved_grants`]: super::Catalog::hold_unapproved_grants

use crate::engine::approvals::{self, AllowRule};
use crate::engine::tools::names;

/// What a command's `allowed-tools` grant, and the entries that grant nothing (as written).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    pub rules: Vec<AllowRule>,
    pub ignored: Vec<String>,
}

/// The grants of `allowed` (each entry as written in the frontmatter).
pub fn grants(allowed: &[String]) -> Grants {
    let mut out = Grants::default();
    for entry in allowed {
        match grant(entry.trim()) {
            Grant::Rule(rule) => {
                if !out.rules.contains(&rule) {
                    out.rules.push(rule);
                }
            }
            Grant::Nothing => {}
            Grant::Refused => out.ignored.push(entry.trim().to_string()),
        }
    }
    out
}

enum Grant {
    Rule(AllowRule),
    /// A tool that needs no approval in the workspace.
    Nothing,
    Refused,
}

fn grant(entry: &str) -> Grant {
    let (tool, spec) = match entry.split_once('(') {
        Some((tool, rest)) => match rest.strip_suffix(')') {
            Some(spec) => (tool.trim(), Some(spec.trim())),
            None => return Grant::Refused,
        },
        None => (entry, None),
    };
    match (tool, spec) {
        ("Bash" | "bash", Some(spec)) => bash(spec),
        ("Edit" | "MultiEdit" | "edit_file", None) => Grant::Rule(AllowRule::Tool {
            tool: names::EDIT_FILE.into(),
        }),
        ("Write" | "write_file", None) => Grant::Rule(AllowRule::Tool {
            tool: names::WRITE_FILE.into(),
        }),
        ("Read" | "Grep" | "Glob" | "LS" | "read_file" | "grep" | "glob" | "list_dir", None) => {
            Grant::Nothing
        }
        ("WebFetch" | "web_fetch", Some(spec)) => match spec.strip_prefix("domain:") {
            Some(host) if !host.trim().is_empty() && !host.contains(['*', '/']) => {
                Grant::Rule(AllowRule::WebDomain {
                    host: host.trim().to_ascii_lowercase(),
                })
            }
            _ => Grant::Refused,
        },
        (mcp, None) if mcp.starts_with("mcp__") && mcp.len() > "mcp__".len() => {
            Grant::Rule(AllowRule::Tool { tool: mcp.into() })
        }
        _ => Grant::Refused,
    }
}

/// `git status:*`, `git status *` (a prefix) or `git status` (exactly).
fn bash(spec: &str) -> Grant {
    let prefix = spec
        .strip_suffix(":*")
        .or_else(|| spec.strip_suffix(" *"))
        .map(str::trim);
    match prefix {
        Some(p) if !p.is_empty() && !p.contains('*') && approvals::grantable_prefix(p) => {
            Grant::Rule(AllowRule::BashPrefix {
                prefix: p.to_string(),
            })
        }
        None if !spec.is_empty() && !spec.contains('*') => Grant::Rule(AllowRule::BashCommand {
            command: spec.to_string(),
        }),
        _ => Grant::Refused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_entries_become_grants_and_the_rest_is_named() {
        let allowed: Vec<String> = [
            "Bash(git status:*)",
            "Bash(git add *)",
            "Bash(npm test)",
            "Edit",
            "MultiEdit",
            "Write",
            "Read",
            "mcp__github__create_issue",
            "Bash",
            "Edit(src/**)",
            "Bash(*)",
            "Bash(rm -rf *.tmp)",
            "WebFetch",
            "WebFetch(domain:Docs.rs)",
            "Bash(unclosed",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let g = grants(&allowed);
        assert_eq!(
            g.rules,
            vec![
                AllowRule::BashPrefix {
                    prefix: "git status".into()
                },
                AllowRule::BashPrefix {
                    prefix: "git add".into()
                },
                AllowRule::BashCommand {
                    command: "npm test".into()
                },
                AllowRule::Tool {
                    tool: "edit_file".into()
                },
                AllowRule::Tool {
                    tool: "write_file".into()
                },
                AllowRule::Tool {
                    tool: "mcp__github__create_issue".into()
                },
                AllowRule::WebDomain {
                    host: "docs.rs".into()
                },
            ]
        );
        assert_eq!(
            g.ignored,
            vec![
                "Bash",
                "Edit(src/**)",
                "Bash(*)",
                "Bash(rm -rf *.tmp)",
                "WebFetch",
                "Bash(unclosed"
            ]
        );
    }
}
