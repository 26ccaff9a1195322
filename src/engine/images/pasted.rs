//! Image paths in a user's message: `@shot.png`, and the path a terminal pastes when a file is
//! dropped on it — quoted (`'/home/me/My Shot.png'`), with escaped spaces
//! (`/Users/me/My\ Shot.png`) or as a `file://` URL. A word counts only when it ends like an
//! image file (`.png`, `.jpg`, `.jpeg`, `.gif`, `.webp`) and names a file that exists. Without an
//! `@` only an absolute path, a `~/` path or a `file://` URL counts (what a terminal pastes): a
//! file name mentioned in a sentence (`fix logo.png`) stays text. With one, a relative path is
//! taken from the workspace.

use std::path::{Path, PathBuf};

use super::has_image_extension;

/// At most this many images are attached from one message.
pub const MAX_IMAGES: usize = 10;
/// At most this many words that end like an image are looked up on disk (a pasted log stays cheap).
const MAX_CANDIDATES: usize = 50;

/// One image path found in a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastedImage {
    /// As the message wrote it, unquoted and unescaped (without a leading `@`).
    pub written: String,
    /// The file it names.
    pub path: PathBuf,
}

/// The image files a message names, in order, once each.
pub fn image_paths(text: &str, workspace: &Path) -> Vec<PastedImage> {
    let mut out: Vec<PastedImage> = Vec::new();
    for (word, at) in words(text)
        .into_iter()
        .filter_map(|w| trimmed(&w))
        .take(MAX_CANDIDATES)
    {
        let pasted = word.starts_with('/') || word.starts_with("~/") || word.starts_with("file://");
        if !at && !pasted {
            continue;
        }
        let Some(path) = resolve(&word, workspace) else {
            continue;
        };
        if !path.is_file() || out.iter().any(|p| p.path == path) {
            continue;
        }
        out.push(PastedImage {
            written: word,
            path,
        });
        if out.len() == MAX_IMAGES {
            break;
        }
    }
    out
}

/// The word without a leading `@` or `(` and trailing sentence punctuation, when what is left
/// ends like an image file; and whether it was written with an `@`.
fn trimmed(word: &str) -> Option<(String, bool)> {
    let w = word.trim_start_matches('(');
    let at = w.starts_with('@');
    let mut w = w.trim_start_matches('@');
    loop {
        if has_image_extension(w) {
            return Some((w.to_string(), at));
        }
        w = w.strip_suffix(['.', ',', ';', ':', '!', '?', ')', ']', '\'', '"'])?;
    }
}

/// The file a written path names: a `file://` URL decoded, `~/` from the home folder, a
/// relative path from the workspace.
fn resolve(word: &str, workspace: &Path) -> Option<PathBuf> {
    let word = match word.strip_prefix("file://") {
        Some(rest) => percent_decode(rest.strip_prefix("localhost").unwrap_or(rest))?,
        None => word.to_string(),
    };
    let path = match word.strip_prefix("~/") {
        Some(rest) => dirs::home_dir()?.join(rest),
        None => PathBuf::from(&word),
    };
    Some(if path.is_absolute() {
        path
    } else {
        workspace.join(path)
    })
}

/// `%20` and friends decoded (None for a broken escape or bytes that are not UTF-8).
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The message split into words the way a shell would: whitespace separates, quotes (single or
/// double) group, a backslash escapes the next character outside single quotes.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' if word.is_empty() || word == "@" => {
                let close = c;
                started = true;
                for n in chars.by_ref() {
                    if n == close {
                        break;
                    }
                    word.push(n);
                }
            }
            '\\' => match chars.next() {
                Some(n) => {
                    word.push(n);
                    started = true;
                }
                None => word.push('\\'),
            },
            c if c.is_whitespace() => {
                if started || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                started = false;
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started || !word.is_empty() {
        out.push(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_follow_the_shell_rules_terminals_paste_with() {
        assert_eq!(
            words(r"see '/a b/c d.png' and /x/My\ Shot.png, @y.gif"),
            ["see", "/a b/c d.png", "and", "/x/My Shot.png,", "@y.gif"]
        );
        assert_eq!(
            words(r#"@"my shot.png" "q.webp""#),
            ["@my shot.png", "q.webp"]
        );
    }

    #[test]
    fn only_existing_image_files_count() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        std::fs::write(ws.join("a.png"), b"x").unwrap();
        std::fs::write(ws.join("logo.png"), b"x").unwrap();
        std::fs::create_dir_all(ws.join("dir with space")).unwrap();
        std::fs::write(ws.join("dir with space/b c.JPG"), b"x").unwrap();
        std::fs::write(ws.join("notes.txt"), b"x").unwrap();
        let abs = ws.join("dir with space/b c.JPG");
        let escaped = abs.display().to_string().replace(' ', "\\ ");
        let url = format!("file://{}", abs.display().to_string().replace(' ', "%20"));
        let text = format!(
            "look at @a.png. then {escaped} and '{}' and {url} @notes.txt missing.png, fix logo.png",
            abs.display()
        );
        let got = image_paths(&text, ws);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].written, "a.png");
        assert_eq!(got[0].path, ws.join("a.png"));
        assert_eq!(got[1].path, abs);
    }
}
