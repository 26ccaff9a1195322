//! Images the model is shown: a PNG, JPEG, GIF or WebP that the user attached (`@shot.png`, a
//! path a terminal pasted on drag and drop, the clipboard) or that `read_file` read.
//!
//! An image is scaled down before it is sent (long side at most [`MAX_LONG_SIDE`] pixels, at most
//! [`MAX_PIXELS`] pixels in all), re-encoded where that makes it smaller, and stored once per
//! content hash in the run directory's image store ([`store`]). The conversation holds an
//! [`ImageRef`] — the stored file's path, its type and size — never the bytes: the transcript
//! names the file, and a provider reads it when it builds a request ([`ImageRef::base64`]).
//! An image counts `width × height / 750` tokens (Anthropic's rule) in the gauge.

pub(crate) mod clipboard;
pub(crate) mod pasted;
mod scale;
mod store;

use std::io;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};

pub use scale::{MAX_LONG_SIDE, MAX_PIXELS, fit};
pub use store::{ImageStore, Prepared};

/// Pixels per token, Anthropic's estimate of an image's cost.
pub const PIXELS_PER_TOKEN: u64 = 750;
/// A source file larger than this is not read (a screenshot is a few megabytes).
pub const MAX_SOURCE_BYTES: u64 = 50 * 1024 * 1024;

/// The four formats the model APIs take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Jpeg,
    Gif,
    WebP,
}

impl Format {
    /// The format of an image by its first bytes; None for anything else.
    pub fn sniff(head: &[u8]) -> Option<Format> {
        if head.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Format::Png)
        } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Format::Jpeg)
        } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
            Some(Format::Gif)
        } else if head.len() >= 12 && head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP")
        {
            Some(Format::WebP)
        } else {
            None
        }
    }

    /// `image/png`, … (what the APIs call it).
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Gif => "image/gif",
            Format::WebP => "image/webp",
        }
    }

    /// `PNG`, … (for people).
    pub fn label(self) -> &'static str {
        match self {
            Format::Png => "PNG",
            Format::Jpeg => "JPEG",
            Format::Gif => "GIF",
            Format::WebP => "WebP",
        }
    }

    /// The stored file's extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Jpeg => "jpg",
            Format::Gif => "gif",
            Format::WebP => "webp",
        }
    }

    pub(crate) const ALL: [Format; 4] = [Format::Png, Format::Jpeg, Format::Gif, Format::WebP];

    fn image_format(self) -> image::ImageFormat {
        match self {
            Format::Png => image::ImageFormat::Png,
            Format::Jpeg => image::ImageFormat::Jpeg,
            Format::Gif => image::ImageFormat::Gif,
            Format::WebP => image::ImageFormat::WebP,
        }
    }
}

/// Whether a file name ends like an image of one of the four formats (a cheap first test
/// before the file is opened).
pub fn has_image_extension(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [".png", ".jpg", ".jpeg", ".gif", ".webp"]
        .iter()
        .any(|ext| lower.ends_with(ext))
}

/// Whether the file at `path` is an image of one of the four formats (by its first bytes).
pub fn is_image_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 12];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let n = f.read(&mut head).unwrap_or(0);
    Format::sniff(head.get(..n).unwrap_or_default()).is_some()
}

/// An image in the conversation: the stored file the model is sent, never its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRef {
    /// What it is called for people: the file name it came from (`shot.png`).
    pub name: String,
    /// Where it came from, as the user or the model named it (a path, or `clipboard`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// The stored (scaled) file in the run's image store: what the model is sent.
    pub path: PathBuf,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    pub width: u32,
    pub height: u32,
}

impl ImageRef {
    /// What the image costs in the context: `width × height / 750`, rounded up.
    pub fn tokens(&self) -> u64 {
        (u64::from(self.width) * u64::from(self.height)).div_ceil(PIXELS_PER_TOKEN)
    }

    /// The chip a front end shows: `[image: shot.png 1280×720]`.
    pub fn chip(&self) -> String {
        format!("[image: {} {}×{}]", self.name, self.width, self.height)
    }

    /// The stored file, base64-encoded, for a request body.
    pub fn base64(&self) -> io::Result<String> {
        let bytes = std::fs::read(&self.path)?;
        Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    /// One line standing in for the image where it is not sent (masked, a model that takes no
    /// images, a compaction's transcript): what it was and where it is.
    pub fn stand_in(&self, why: &str) -> String {
        format!(
            "[image {} ({}×{}, {}) {why}; stored at {}]",
            self.name,
            self.width,
            self.height,
            self.media_type,
            self.path.display()
        )
    }
}

/// Why an image could not be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("not a PNG, JPEG, GIF or WebP image")]
    NotAnImage,
    #[error(
        "the file is {:.1} MB, more than the {} MB an image may have",
        *.0 as f64 / 1_048_576.0,
        MAX_SOURCE_BYTES / 1_048_576
    )]
    TooLarge(u64),
    #[error("the {format} image could not be decoded: {message}")]
    Decode {
        format: &'static str,
        message: String,
    },
    #[error("the image could not be encoded: {0}")]
    Encode(String),
    #[error("the image could not be stored in {dir}: {message}")]
    Store { dir: String, message: String },
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
}

/// The display name of a source path: its file name, else the path itself.
pub(crate) fn display_name(source: &str) -> String {
    Path::new(source)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| source.to_string())
}

#[cfg(test)]
mod tests;
