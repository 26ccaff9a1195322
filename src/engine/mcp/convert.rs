//! An MCP tool result as the model sees it: the text of its text blocks and of embedded text
//! resources, and a one-line placeholder naming anything else (images, audio, binary resources,
//! resource links), since tool results reach the model as text. `isError` results are tool errors.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::engine::tools::ToolOutput;

/// The model's view of `result`.
pub(crate) fn to_output(result: &CallToolResult) -> ToolOutput {
    let mut parts: Vec<String> = Vec::with_capacity(result.content.len());
    for block in &result.content {
        parts.push(block_text(block));
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let text = if parts.is_empty() {
        "(the tool returned no content)".to_string()
    } else {
        parts.join("\n")
    };
    let text = crate::engine::secrets::redact(&text).into_owned();
    if result.is_error == Some(true) {
        ToolOutput::error(text)
    } else {
        ToolOutput::ok(text)
    }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!(
            "[image: {}, {} — not shown to the model]",
            i.mime_type,
            size(base64_len(&i.data))
        ),
        ContentBlock::Audio(a) => format!(
            "[audio: {}, {} — not shown to the model]",
            a.mime_type,
            size(base64_len(&a.data))
        ),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => format!("[resource: {uri}{}]\n{text}", mime(mime_type)),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource: {uri}{}, {} of binary data — not shown to the model]",
                mime(mime_type),
                size(base64_len(blob))
            ),
            _ => "[a resource of a kind flower-tui does not show]".to_string(),
        },
        ContentBlock::ResourceLink(link) => {
            let mut s = format!("[resource link: {}", link.uri);
            if link.name != link.uri {
                s.push_str(&format!(" ({})", link.name));
            }
            s.push_str(&mime(&link.mime_type));
            if let Some(d) = link.description.as_deref().filter(|d| !d.is_empty()) {
                s.push_str(&format!(" — {d}"));
            }
            s.push(']');
            s
        }
        // A block kind newer than this code: name it rather than drop it silently.
        _ => "[content of a kind flower-tui does not show]".to_string(),
    }
}

fn mime(m: &Option<String>) -> String {
    match m.as_deref() {
        Some(m) if !m.is_empty() => format!(", {m}"),
        _ => String::new(),
    }
}

/// The decoded size of base64 text (close enough for a placeholder).
fn base64_len(data: &str) -> usize {
    let trimmed = data.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

fn size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Resource;

    fn result(blocks: Vec<ContentBlock>, is_error: bool) -> CallToolResult {
        if is_error {
            CallToolResult::error(blocks)
        } else {
            CallToolResult::success(blocks)
        }
    }

    #[test]
    fn text_and_placeholders() {
        let link = ContentBlock::resource_link(Resource::new("file:///a.txt", "a.txt"));
        let r = result(
            vec![
                ContentBlock::text("hello"),
                ContentBlock::image("aGVsbG8gd29ybGQ=", "image/png"),
                ContentBlock::audio("AAAA", "audio/wav"),
                ContentBlock::embedded_text("mem://note", "note body"),
                ContentBlock::resource(ResourceContents::blob("AAAAAAAA", "mem://blob")),
                link,
            ],
            false,
        );
        let out = to_output(&r);
        assert!(!out.is_error);
        assert_eq!(
            out.content,
            "hello\n\
             [image: image/png, 11 bytes — not shown to the model]\n\
             [audio: audio/wav, 3 bytes — not shown to the model]\n\
             [resource: mem://note, text/plain]\nnote body\n\
             [resource: mem://blob, 6 bytes of binary data — not shown to the model]\n\
             [resource link: file:///a.txt (a.txt)]"
        );
    }

    #[test]
    fn errors_empty_and_structured() {
        let out = to_output(&result(vec![ContentBlock::text("bad input")], true));
        assert!(out.is_error);
        assert_eq!(out.content, "bad input");
        assert_eq!(
            to_output(&result(vec![], false)).content,
            "(the tool returned no content)"
        );
        let structured = CallToolResult::structured(serde_json::json!({"sum": 3}));
        // `structured()` also fills a text block with the same JSON.
        assert_eq!(to_output(&structured).content, r#"{"sum":3}"#);
        let mut only = structured.clone();
        only.content.clear();
        assert_eq!(to_output(&only).content, r#"{"sum":3}"#);
    }
}
