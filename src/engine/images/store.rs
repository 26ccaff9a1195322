//! The run's image store: `<run>/images/<hash>.<ext>`, one file per source content hash, written
//! atomically. An image attached or read twice is scaled once.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::scale::{self, Scaled};
use super::{Format, ImageError, ImageRef, MAX_SOURCE_BYTES, display_name};
use crate::engine::fsutil::atomic_write_unsynced;

/// Hex characters of the content hash that name a stored image.
const HASH_CHARS: usize = 32;

/// Where a run keeps the images its conversation shows the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageStore {
    dir: PathBuf,
}

/// An image taken into the store: the reference the conversation keeps, and what it was made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub image: ImageRef,
    /// The source's format and size.
    pub source_format: Format,
    pub source_width: u32,
    pub source_height: u32,
    pub source_bytes: u64,
    /// The stored file's size (what a request carries, before base64).
    pub stored_bytes: u64,
}

impl Prepared {
    /// One line for the model and the user: `shot.png: PNG 2560×1440 (812 KB), sent as
    /// 1568×882 PNG (1844 tokens)`.
    pub fn describe(&self) -> String {
        let i = &self.image;
        let sent = if (i.width, i.height) == (self.source_width, self.source_height) {
            format!("sent as it is ({} tokens)", i.tokens())
        } else {
            format!(
                "sent scaled to {}×{} ({} tokens)",
                i.width,
                i.height,
                i.tokens()
            )
        };
        format!(
            "{}: {} {}×{} ({}), {sent}",
            i.name,
            self.source_format.label(),
            self.source_width,
            self.source_height,
            kilobytes(self.source_bytes)
        )
    }
}

fn kilobytes(bytes: u64) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    }
}

impl ImageStore {
    /// The store in `dir` (created when the first image arrives).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ImageStore { dir: dir.into() }
    }

    /// The store of the run directory `run_root`.
    pub fn in_run(run_root: &Path) -> Self {
        ImageStore::new(run_root.join("images"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Read the image file at `path` (named `source` for people) into the store.
    pub fn add_file(&self, path: &Path, source: &str) -> Result<Prepared, ImageError> {
        let read_err = |e: std::io::Error| ImageError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let len = std::fs::metadata(path).map_err(read_err)?.len();
        if len > MAX_SOURCE_BYTES {
            return Err(ImageError::TooLarge(len));
        }
        let bytes = std::fs::read(path).map_err(read_err)?;
        self.add(&bytes, source)
    }

    /// Take the image `bytes` (named `source` for people) into the store: scaled and stored
    /// the first time, found again after.
    pub fn add(&self, bytes: &[u8], source: &str) -> Result<Prepared, ImageError> {
        let format = Format::sniff(bytes).ok_or(ImageError::NotAnImage)?;
        if bytes.len() as u64 > MAX_SOURCE_BYTES {
            return Err(ImageError::TooLarge(bytes.len() as u64));
        }
        let hash = hash(bytes);
        if let Some(found) = self.find(&hash, bytes, format, source) {
            return Ok(found);
        }
        let Scaled {
            bytes: out,
            format: stored,
            width,
            height,
            source_width,
            source_height,
        } = scale::scale(bytes, format)?;
        let path = self.dir.join(format!("{hash}.{}", stored.extension()));
        atomic_write_unsynced(&path, &out).map_err(|e| ImageError::Store {
            dir: self.dir.display().to_string(),
            message: e.to_string(),
        })?;
        Ok(Prepared {
            image: ImageRef {
                name: display_name(source),
                source: source.to_string(),
                path,
                media_type: stored.media_type().to_string(),
                width,
                height,
            },
            source_format: format,
            source_width,
            source_height,
            source_bytes: bytes.len() as u64,
            stored_bytes: out.len() as u64,
        })
    }

    /// The image stored for `hash` already, if any (its size read from its header).
    fn find(
        &self,
        hash: &str,
        source_bytes: &[u8],
        format: Format,
        source: &str,
    ) -> Option<Prepared> {
        Format::ALL.iter().find_map(|stored| {
            let path = self.dir.join(format!("{hash}.{}", stored.extension()));
            let bytes = std::fs::read(&path).ok()?;
            let (width, height) = scale::dimensions(&bytes, *stored).ok()?;
            let (source_width, source_height) =
                scale::dimensions(source_bytes, format).unwrap_or((width, height));
            Some(Prepared {
                image: ImageRef {
                    name: display_name(source),
                    source: source.to_string(),
                    path,
                    media_type: stored.media_type().to_string(),
                    width,
                    height,
                },
                source_format: format,
                source_width,
                source_height,
                source_bytes: source_bytes.len() as u64,
                stored_bytes: bytes.len() as u64,
            })
        })
    }
}

/// The content hash that names a stored image.
fn hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(HASH_CHARS);
    for b in digest.iter() {
        out.push_str(&format!("{b:02x}"));
        if out.len() >= HASH_CHARS {
            break;
        }
    }
    out
}
