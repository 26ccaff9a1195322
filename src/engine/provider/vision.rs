//! Models that take no images. A text-only model by name, or one whose server refused an image
//! (llama.cpp without a vision projector, a text-only model behind an OpenAI-compatible API, a
//! 400 that says so), gets its requests without the images: each is replaced by a line saying
//! what it was and where it is stored, and the conversation goes on. The user is told once per
//! model ([`ImageMemory`]).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use super::error::{ErrorKind, ProviderError};
use crate::engine::types::{Block, Message, ModelRequest};

/// Whether `model` is known by name to take no images. Unknown names are assumed to take them
/// (a refusal teaches otherwise).
pub fn text_only(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    const SEES: &[&str] = &[
        "vision",
        "-vl",
        "vl-",
        "llava",
        "pixtral",
        "minicpm-v",
        "moondream",
        "gemma3",
        "gemma-3",
        "4.5v",
        "4.6v",
        "omni",
    ];
    const BLIND: &[&str] = &[
        "gpt-3.5",
        "o1-mini",
        "o3-mini",
        "deepseek-chat",
        "deepseek-coder",
        "deepseek-reasoner",
        "deepseek-r1",
        "deepseek-v3",
        "codestral",
        "qwen2.5-coder",
        "qwen3-coder",
        "qwq",
        "mixtral",
        "mistral-7b",
        "codellama",
        "starcoder",
        "llama-2",
        "llama2",
        "llama-3.1",
        "llama3.1",
        "llama-3.3",
        "llama3.3",
        "gpt-oss",
        "kimi-k2",
    ];
    !SEES.iter().any(|s| m.contains(s)) && BLIND.iter().any(|b| m.contains(b))
}

/// Whether an error says the model or server takes no images.
pub fn refuses_images(e: &ProviderError) -> bool {
    if matches!(
        e.kind,
        ErrorKind::RateLimited | ErrorKind::Auth | ErrorKind::ContextWindowExceeded
    ) {
        return false;
    }
    let m = e.message.to_ascii_lowercase();
    let about_images = ["image", "vision", "multimodal", "mmproj"]
        .iter()
        .any(|w| m.contains(w));
    let refusal = [
        "not supported",
        "unsupported",
        "does not support",
        "doesn't support",
        "do not support",
        "only supported",
        "not a multimodal",
        "is not multimodal",
        "no endpoints found that support",
        "missing data required for image",
        "at most 0 image",
        "mmproj",
    ]
    .iter()
    .any(|w| m.contains(w));
    about_images && refusal
}

/// Whether a request carries an image.
pub fn has_images(req: &ModelRequest) -> bool {
    req.messages.iter().any(|m| m.images().next().is_some())
}

/// `req` with every image replaced by a line saying `why` it is not there: an image a tool
/// returned joins its call's result as that line; an attached one becomes a text block.
pub fn without_images(req: &ModelRequest, why: &str) -> ModelRequest {
    let mut out = req.clone();
    for m in &mut out.messages {
        strip(m, why);
    }
    out
}

fn strip(m: &mut Message, why: &str) {
    if m.images().next().is_none() {
        return;
    }
    let mut notes: Vec<(String, String)> = Vec::new();
    let mut kept = Vec::with_capacity(m.content.len());
    for b in std::mem::take(&mut m.content) {
        match b {
            Block::Image {
                image,
                tool_use_id: Some(id),
            } => notes.push((id, image.stand_in(why))),
            Block::Image {
                image,
                tool_use_id: None,
            } => kept.push(Block::text(image.stand_in(why))),
            other => kept.push(other),
        }
    }
    for (id, note) in notes {
        let result = kept.iter_mut().find_map(|b| match b {
            Block::ToolResult {
                tool_use_id,
                content,
                ..
            } if *tool_use_id == id => Some(content),
            _ => None,
        });
        match result {
            Some(content) => {
                content.push('\n');
                content.push_str(&note);
            }
            None => kept.push(Block::text(note)),
        }
    }
    m.content = kept;
}

/// What a provider learned about images: the models that refused one, and those the user was
/// told about. Shared by clones of the provider.
#[derive(Debug, Clone, Default)]
pub struct ImageMemory(Arc<Mutex<Memory>>);

#[derive(Debug, Default)]
struct Memory {
    refused: HashSet<String>,
    told: HashSet<String>,
}

impl ImageMemory {
    /// Whether `model` may be sent images.
    pub fn takes_images(&self, model: &str) -> bool {
        !text_only(model) && !self.lock().refused.contains(model)
    }

    /// Images were left out of a request for `model` (`refused`: because its server refused
    /// one just now). True the first time for this model: the user is told then.
    pub fn left_out(&self, model: &str, refused: bool) -> bool {
        let mut m = self.lock();
        if refused {
            m.refused.insert(model.to_string());
        }
        m.told.insert(model.to_string())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::images::ImageRef;
    use crate::engine::types::{Role, ToolChoice};

    #[test]
    fn names_and_refusals() {
        assert!(text_only("deepseek-chat"));
        assert!(text_only("qwen2.5-coder:7b"));
        assert!(!text_only("qwen2.5-vl-7b"));
        assert!(!text_only("claude-sonnet-4-5"));
        assert!(!text_only("gpt-4o"));
        assert!(!text_only("some-local-model"));
        for (status, msg) in [
            (
                500,
                "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
            ),
            (
                400,
                "Invalid content type. image_url is only supported by certain models.",
            ),
            (404, "No endpoints found that support image input"),
            (400, "this model is missing data required for image input"),
            (400, "At most 0 image(s) may be provided in one request."),
        ] {
            let e = super::super::error::classify(status, msg, None);
            assert!(refuses_images(&e), "{msg}");
        }
        for (status, msg) in [(400, "prompt is too long"), (429, "image rate limit")] {
            let e = super::super::error::classify(status, msg, None);
            assert!(!refuses_images(&e), "{msg}");
        }
    }

    #[test]
    fn images_become_lines_and_a_tools_image_joins_its_result() {
        let img = |name: &str| ImageRef {
            name: name.into(),
            source: String::new(),
            path: format!("/run/images/{name}").into(),
            media_type: "image/png".into(),
            width: 10,
            height: 20,
        };
        let req = ModelRequest {
            model: "m".into(),
            system: String::new(),
            messages: vec![Message {
                role: Role::User,
                content: vec![
                    Block::ToolResult {
                        tool_use_id: "t1".into(),
                        content: "Image a.png".into(),
                        is_error: false,
                    },
                    Block::text("look"),
                    Block::image(img("b.png")),
                    Block::Image {
                        image: img("a.png"),
                        tool_use_id: Some("t1".into()),
                    },
                ],
            }],
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            max_tokens: 0,
            effort: None,
        };
        assert!(has_images(&req));
        let out = without_images(&req, "not sent");
        assert!(!has_images(&out));
        let c = &out.messages[0].content;
        assert_eq!(c.len(), 3);
        let Block::ToolResult { content, .. } = &c[0] else {
            panic!("{c:?}")
        };
        assert!(content.starts_with("Image a.png\n[image a.png (10×20, image/png) not sent"));
        assert!(matches!(&c[2], Block::Text { text } if text.contains("b.png")));
    }

    #[test]
    fn the_user_is_told_once_per_model() {
        let m = ImageMemory::default();
        assert!(m.takes_images("llava"));
        assert!(m.left_out("local", true));
        assert!(!m.takes_images("local"));
        assert!(!m.left_out("local", true));
        assert!(m.left_out("deepseek-chat", false));
    }
}
