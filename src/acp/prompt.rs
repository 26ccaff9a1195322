//! A prompt's content blocks as the user's message: text as it is; a resource link as an `@path`
//! mention (a `file://` link inside the workspace, so the engine attaches the file as the TUI
//! does) or, for another URI, named in the text; an embedded resource's text inline, fenced
//! under its URI; an image is written once (named by its hash) into the folder the agent keeps
//! for the editor's images and attached by its path, as a pasted image is. Audio is refused (the
//! capabilities say so). A message that starts
//! with `/handoff` or a custom command's name runs it, as in the TUI.

use std::path::Path;

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource, ImageContent};
use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::engine::commands::Catalog;
use crate::engine::images::{Format, MAX_SOURCE_BYTES};
use crate::engine::protocol::{Op, TurnId};

/// The message of `blocks`, or why it cannot be sent; images are kept in `images`.
pub(super) fn text(
    blocks: &[ContentBlock],
    workspace: &Path,
    images: &Path,
) -> Result<String, String> {
    let mut parts: Vec<String> = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::ResourceLink(link) => parts.push(mention(&link.uri, workspace)),
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    parts.push(embedded(&t.uri, &t.text));
                }
                EmbeddedResourceResource::BlobResourceContents(b) => {
                    return Err(format!(
                        "binary resources are not supported yet ({})",
                        b.uri
                    ));
                }
                _ => return Err("this kind of embedded resource is not supported".into()),
            },
            ContentBlock::Image(image) => parts.push(image_file(image, images)?),
            ContentBlock::Audio(_) => return Err("audio is not supported".into()),
            _ => return Err("this kind of content is not supported".into()),
        }
    }
    let text = parts.join("\n");
    if text.trim().is_empty() {
        return Err("the prompt is empty".into());
    }
    Ok(text)
}

/// An image of the prompt, written to `dir` under its hash (once), as the mention that attaches
/// it: `@"/path"`.
fn image_file(image: &ImageContent, dir: &Path) -> Result<String, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(image.data.trim())
        .map_err(|e| format!("the image is not valid base64: {e}"))?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(format!(
            "the image is {:.1} MB, more than the {} MB an image may have",
            bytes.len() as f64 / 1_048_576.0,
            MAX_SOURCE_BYTES / 1_048_576
        ));
    }
    let format = Format::sniff(&bytes).ok_or_else(|| {
        format!(
            "the image ({}) is not a PNG, JPEG, GIF or WebP",
            image.mime_type
        )
    })?;
    let digest = Sha256::digest(&bytes);
    let name: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    let path = dir.join(format!("{name}.{}", format.extension()));
    if !path.is_file() {
        std::fs::create_dir_all(dir)
            .and_then(|()| crate::engine::fsutil::atomic_write(&path, &bytes))
            .map_err(|e| format!("the image could not be kept in {}: {e}", dir.display()))?;
    }
    Ok(format!("@\"{}\"", path.display()))
}

/// A resource link: `@relative/path` for a file in the workspace (the engine attaches it), else
/// the URI as text.
fn mention(uri: &str, workspace: &Path) -> String {
    let Some(path) = uri.strip_prefix("file://").map(percent_decode) else {
        return format!("<{uri}>");
    };
    match Path::new(&path).strip_prefix(workspace) {
        Ok(rel) if !rel.as_os_str().is_empty() && !path.contains(char::is_whitespace) => {
            format!("@{}", rel.display())
        }
        _ => format!("`{path}`"),
    }
}

/// An embedded resource's text, fenced under its URI.
fn embedded(uri: &str, text: &str) -> String {
    let name = uri.strip_prefix("file://").map(percent_decode);
    let name = name.as_deref().unwrap_or(uri);
    let fence = if text.contains("```") { "````" } else { "```" };
    format!("{name}:\n{fence}\n{}\n{fence}", text.trim_end_matches('\n'))
}

/// `%20` and the like in a file URI's path.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The op of a message: `/handoff [focus]` and `/name args` (a custom command) run as in the
/// TUI; anything else is the user's message.
pub(super) fn op(turn: TurnId, text: &str, commands: &Catalog) -> Op {
    if let Some(rest) = text.trim_start().strip_prefix('/') {
        let (word, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let args = args.trim();
        if word == "handoff" {
            return Op::Handoff {
                turn,
                focus: (!args.is_empty()).then(|| args.to_string()),
            };
        }
        if let Some(command) = commands.get(word) {
            return Op::Command {
                turn,
                name: command.name.clone(),
                args: args.to_string(),
            };
        }
    }
    Op::UserTurn {
        turn,
        text: text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        BlobResourceContents, EmbeddedResource, ImageContent, ResourceLink, TextContent,
        TextResourceContents,
    };

    fn t(s: &str) -> ContentBlock {
        ContentBlock::Text(TextContent::new(s))
    }

    #[test]
    fn links_in_the_workspace_become_mentions_and_resources_are_inlined() {
        let ws = Path::new("/w/proj");
        let blocks = vec![
            t("look at"),
            ContentBlock::ResourceLink(ResourceLink::new("main.rs", "file:///w/proj/src/main.rs")),
            ContentBlock::ResourceLink(ResourceLink::new("x", "file:///etc/my%20hosts")),
            ContentBlock::ResourceLink(ResourceLink::new("web", "https://example.com/a")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn a() {}\n",
                    "file:///w/proj/src/a.rs",
                )),
            )),
        ];
        assert_eq!(
            text(&blocks, ws, Path::new("/nonexistent")).unwrap(),
            "look at\n@src/main.rs\n`/etc/my hosts`\n<https://example.com/a>\n\
             /w/proj/src/a.rs:\n```\nfn a() {}\n```"
        );
    }

    #[test]
    fn an_image_is_kept_once_by_its_hash_and_attached_by_its_path() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("images");
        let png = b"\x89PNG\r\n\x1a\n rest of a png";
        let data = base64::engine::general_purpose::STANDARD.encode(png);
        let blocks = [
            t("what is this?"),
            ContentBlock::Image(ImageContent::new(data.clone(), "image/png")),
        ];
        let first = text(&blocks, Path::new("/w"), &dir).unwrap();
        let again = text(&blocks, Path::new("/w"), &dir).unwrap();
        assert_eq!(first, again, "the same image is the same file");
        let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let path = files[0].path();
        assert_eq!(std::fs::read(&path).unwrap(), png);
        assert_eq!(path.extension().unwrap(), "png");
        assert_eq!(first, format!("what is this?\n@\"{}\"", path.display()));
    }

    #[test]
    fn images_that_are_no_images_blobs_and_empty_prompts_are_refused() {
        let ws = Path::new("/w");
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let text = |blocks: &[ContentBlock], ws: &Path| text(blocks, ws, dir);
        let not_base64 = ContentBlock::Image(ImageContent::new("***", "image/png"));
        assert!(text(&[not_base64], ws).unwrap_err().contains("base64"));
        let not_an_image = ContentBlock::Image(ImageContent::new("AAAA", "image/png"));
        assert!(
            text(&[not_an_image], ws)
                .unwrap_err()
                .contains("not a PNG, JPEG, GIF or WebP")
        );
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "nothing kept");
        let blob = ContentBlock::Resource(EmbeddedResource::new(
            EmbeddedResourceResource::BlobResourceContents(BlobResourceContents::new(
                "AAAA",
                "file:///w/a.bin",
            )),
        ));
        assert!(text(&[blob], ws).unwrap_err().contains("binary"));
        assert!(text(&[t("  ")], ws).unwrap_err().contains("empty"));
    }

    #[test]
    fn handoff_runs_as_a_command_and_the_rest_is_a_message() {
        let none = Catalog::default();
        assert_eq!(
            op(TurnId(3), "/handoff the tests", &none),
            Op::Handoff {
                turn: TurnId(3),
                focus: Some("the tests".into())
            }
        );
        assert_eq!(
            op(TurnId(3), "/handoff", &none),
            Op::Handoff {
                turn: TurnId(3),
                focus: None
            }
        );
        assert_eq!(
            op(TurnId(4), "/nope x", &none),
            Op::UserTurn {
                turn: TurnId(4),
                text: "/nope x".into()
            }
        );
    }
}
