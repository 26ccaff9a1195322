//! Tool names as the model sees them: `mcp__<server>__<tool>`, within what both the Anthropic and
//! the OpenAI APIs accept (`^[a-zA-Z0-9_-]{1,64}$`).
//!
//! The prefix keeps every MCP tool apart from the built-in ones: a server's `read_file` is offered as
//! `mcp__<server>__read_file` and never shadows flower-tui's own. A tool name the APIs would refuse
//! (dots, spaces, non-ASCII, too long) is rewritten and given a short stable hash of the original,
//! so two tools never end up with one name and the same tool keeps its name across restarts.

/// The longest tool name the model APIs accept.
pub(crate) const MAX_TOOL_NAME: usize = 64;
/// What every MCP tool name starts with.
pub(crate) const PREFIX: &str = "mcp__";

/// Whether `name` is one the model APIs accept.
pub fn is_api_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The name the model sees for `tool` of `server` (a server name already checked by
/// [`super::config::valid_server_name`]).
pub(crate) fn qualified(server: &str, tool: &str) -> String {
    let cleaned: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let plain = format!("{PREFIX}{server}__{cleaned}");
    if cleaned == tool && !tool.is_empty() && plain.len() <= MAX_TOOL_NAME {
        return plain;
    }
    // Rewritten or too long: keep as much as fits and add a hash of the original, so distinct tools
    // stay distinct. Every character of `plain` is ASCII, so byte truncation is safe.
    let suffix = format!("_{:08x}", fnv1a(server, tool) as u32);
    let keep = MAX_TOOL_NAME - suffix.len();
    let mut name: String = plain.chars().take(keep).collect();
    name.push_str(&suffix);
    name
}

/// FNV-1a over `server`, a separator and `tool`: stable across builds and Rust versions (unlike
/// `DefaultHasher`), which matters because tool names are stored in transcripts.
fn fnv1a(server: &str, tool: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in server.bytes().chain([0u8]).chain(tool.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_prefixed_unchanged() {
        assert_eq!(
            qualified("github", "create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(qualified("fs", "read_file"), "mcp__fs__read_file");
        assert_eq!(qualified("a-b", "get-sum"), "mcp__a-b__get-sum");
    }

    #[test]
    fn unsafe_or_long_names_are_rewritten_distinctly_and_stably() {
        let cases = [
            ("srv", "tool.with.dots"),
            ("srv", "tool with spaces"),
            ("srv", "tool_with_dots"),
            ("srv", "ünïcode"),
            ("srv", ""),
            ("srv", &"x".repeat(100)),
            ("srv", &format!("{}y", "x".repeat(99))),
            (
                "a-very-long-server-name-of-32-ch",
                "and_a_long_tool_name_too_1234567890",
            ),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for (server, tool) in cases {
            let name = qualified(server, tool);
            assert!(is_api_safe(&name), "{name:?} from {tool:?}");
            assert!(name.starts_with(&format!("{PREFIX}{server}")) || name.len() == MAX_TOOL_NAME);
            assert_eq!(name, qualified(server, tool), "stable");
            assert!(seen.insert(name.clone()), "duplicate {name}");
        }
        // `tool.with.dots` and `tool_with_dots` would clash without the hash.
        assert_ne!(qualified("srv", "a.b"), qualified("srv", "a_b"));
        assert_eq!(
            qualified("srv", "a.b"),
            "mcp__srv__a_b_".to_string() + &format!("{:08x}", fnv1a("srv", "a.b") as u32)
        );
    }

    #[test]
    fn api_safe_rule() {
        assert!(is_api_safe("read_file"));
        assert!(!is_api_safe(""));
        assert!(!is_api_safe("a.b"));
        assert!(!is_api_safe(&"a".repeat(65)));
        assert!(is_api_safe(&"a".repeat(64)));
    }
}
