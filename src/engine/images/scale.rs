//! Decoding, scaling and re-encoding one image: the long side to at most [`MAX_LONG_SIDE`] and
//! the area to at most [`MAX_PIXELS`], the result kept in the smaller of its original bytes
//! (when nothing was scaled) and a PNG or JPEG re-encoding.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, PngEncoder};
use image::imageops::FilterType;
use image::{DynamicImage, ImageEncoder, ImageReader, Limits};

use super::{Format, ImageError};

/// The long side of an image sent to a model, at most (pixels).
pub const MAX_LONG_SIDE: u32 = 1568;
/// The pixels of an image sent to a model, at most (about 1.15 megapixels).
pub const MAX_PIXELS: u64 = 1_150_000;
/// Original bytes above this are re-encoded to see whether that is smaller.
const KEEP_ORIGINAL_BELOW: usize = 512 * 1024;
/// A PNG above this is tried as a JPEG too (photographs compress far better that way).
const TRY_JPEG_ABOVE: usize = 1024 * 1024;
/// JPEG quality of a re-encoding.
const JPEG_QUALITY: u8 = 85;
/// The largest source image decoded, per side (a larger one is refused, not allocated).
const MAX_DECODE_SIDE: u32 = 16_384;
/// The most memory a decoder may allocate (an 8K screenshot needs a quarter of it).
const MAX_DECODE_ALLOC: u64 = 512 * 1024 * 1024;

/// The size an image of `width × height` is sent at: itself when it fits, else scaled down
/// keeping its aspect ratio until both limits hold.
pub fn fit(width: u32, height: u32) -> (u32, u32) {
    let (w, h) = (u64::from(width.max(1)), u64::from(height.max(1)));
    let long = w.max(h);
    if long <= u64::from(MAX_LONG_SIDE) && w * h <= MAX_PIXELS {
        return (width.max(1), height.max(1));
    }
    let by_side = f64::from(MAX_LONG_SIDE) / long as f64;
    let by_area = (MAX_PIXELS as f64 / (w * h) as f64).sqrt();
    let s = by_side.min(by_area);
    let mut nw = ((w as f64 * s).floor() as u64).max(1);
    let mut nh = ((h as f64 * s).floor() as u64).max(1);
    // Rounding never takes it over a limit.
    while nw * nh > MAX_PIXELS || nw.max(nh) > u64::from(MAX_LONG_SIDE) {
        if nw >= nh {
            nw = nw.saturating_sub(1).max(1);
        } else {
            nh = nh.saturating_sub(1).max(1);
        }
    }
    (
        u32::try_from(nw).unwrap_or(MAX_LONG_SIDE),
        u32::try_from(nh).unwrap_or(MAX_LONG_SIDE),
    )
}

/// An image ready to store: its bytes, format and size, and the size of the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scaled {
    pub bytes: Vec<u8>,
    pub format: Format,
    pub width: u32,
    pub height: u32,
    pub source_width: u32,
    pub source_height: u32,
}

/// Decode `bytes` (of `format`), scale it to [`fit`], and encode it as small as this module
/// can: the original bytes when nothing was scaled and they are small or smallest.
pub(crate) fn scale(bytes: &[u8], format: Format) -> Result<Scaled, ImageError> {
    let decode_err = |e: image::ImageError| ImageError::Decode {
        format: format.label(),
        message: e.to_string(),
    };
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format.image_format());
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DECODE_SIDE);
    limits.max_image_height = Some(MAX_DECODE_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    let img = reader.decode().map_err(decode_err)?;
    let (source_width, source_height) = (img.width(), img.height());
    let (width, height) = fit(source_width, source_height);
    let resized = (width, height) != (source_width, source_height);
    if !resized && bytes.len() <= KEEP_ORIGINAL_BELOW {
        return Ok(Scaled {
            bytes: bytes.to_vec(),
            format,
            width,
            height,
            source_width,
            source_height,
        });
    }
    let img = if resized {
        img.resize_exact(width, height, FilterType::Triangle)
    } else {
        img
    };
    let (mut best, mut best_format) = encode(&img, format)?;
    if !resized && bytes.len() <= best.len() {
        best = bytes.to_vec();
        best_format = format;
    }
    Ok(Scaled {
        bytes: best,
        format: best_format,
        width,
        height,
        source_width,
        source_height,
    })
}

/// The smaller of a PNG and (for a photograph, or a large PNG without transparency) a JPEG.
fn encode(img: &DynamicImage, source: Format) -> Result<(Vec<u8>, Format), ImageError> {
    if source == Format::Jpeg {
        return Ok((jpeg(img)?, Format::Jpeg));
    }
    let png = png(img)?;
    if png.len() > TRY_JPEG_ABOVE && !img.color().has_alpha() {
        let jpg = jpeg(img)?;
        if jpg.len() < png.len() {
            return Ok((jpg, Format::Jpeg));
        }
    }
    Ok((png, Format::Png))
}

fn png(img: &DynamicImage) -> Result<Vec<u8>, ImageError> {
    let mut out = Vec::new();
    let enc = PngEncoder::new_with_quality(
        &mut out,
        CompressionType::Default,
        image::codecs::png::FilterType::Adaptive,
    );
    let rgba;
    let (buf, color): (&[u8], image::ExtendedColorType) = match img {
        DynamicImage::ImageRgb8(b) => (b.as_raw(), image::ExtendedColorType::Rgb8),
        DynamicImage::ImageRgba8(b) => (b.as_raw(), image::ExtendedColorType::Rgba8),
        DynamicImage::ImageLuma8(b) => (b.as_raw(), image::ExtendedColorType::L8),
        DynamicImage::ImageLumaA8(b) => (b.as_raw(), image::ExtendedColorType::La8),
        other => {
            rgba = other.to_rgba8();
            (rgba.as_raw(), image::ExtendedColorType::Rgba8)
        }
    };
    enc.write_image(buf, img.width(), img.height(), color)
        .map_err(|e| ImageError::Encode(e.to_string()))?;
    Ok(out)
}

fn jpeg(img: &DynamicImage) -> Result<Vec<u8>, ImageError> {
    let mut out = Vec::new();
    let rgb = img.to_rgb8();
    JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY)
        .write_image(
            rgb.as_raw(),
            rgb.width(),
            rgb.height(),
            image::ExtendedColorType::Rgb8,
        )
        .map_err(|e| ImageError::Encode(e.to_string()))?;
    Ok(out)
}

/// The size of an image from its header alone (a stored image found again).
pub(crate) fn dimensions(bytes: &[u8], format: Format) -> Result<(u32, u32), ImageError> {
    ImageReader::with_format(Cursor::new(bytes), format.image_format())
        .into_dimensions()
        .map_err(|e| ImageError::Decode {
            format: format.label(),
            message: e.to_string(),
        })
}
