use super::*;

/// A PNG of `w × h` with some structure (a gradient and stripes), encoded for real.
pub(crate) fn png_bytes(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([
            (x % 256) as u8,
            (y % 256) as u8,
            if (x / 7) % 2 == 0 { 40 } else { 220 },
        ])
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

fn jpeg_bytes(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x / 3) as u8, (y / 3) as u8, 90]));
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(
            &mut std::io::Cursor::new(&mut out),
            image::ImageFormat::Jpeg,
        )
        .unwrap();
    out
}

#[test]
fn fit_keeps_both_limits_and_the_aspect_ratio() {
    assert_eq!(fit(800, 600), (800, 600));
    assert_eq!(fit(1568, 700), (1568, 700));
    for (w, h) in [
        (2560, 1440),
        (3840, 2160),
        (1200, 1200),
        (100, 9000),
        (5000, 10),
    ] {
        let (nw, nh) = fit(w, h);
        assert!(nw.max(nh) <= MAX_LONG_SIDE, "{w}x{h} -> {nw}x{nh}");
        assert!(
            u64::from(nw) * u64::from(nh) <= MAX_PIXELS,
            "{w}x{h} -> {nw}x{nh}"
        );
        // The aspect ratio holds to the pixel: the short side follows from the long one.
        let (long, short, new_long, new_short) = if w >= h {
            (w, h, nw, nh)
        } else {
            (h, w, nh, nw)
        };
        let expected = f64::from(new_long) * f64::from(short) / f64::from(long);
        assert!(
            (expected - f64::from(new_short)).abs() <= 1.0,
            "{w}x{h} -> {nw}x{nh}"
        );
    }
    // A 1200×1200 square is over the area limit only.
    assert_eq!(fit(1200, 1200), (1072, 1072));
}

#[test]
fn formats_are_known_by_their_first_bytes() {
    assert_eq!(Format::sniff(&png_bytes(2, 2)), Some(Format::Png));
    assert_eq!(Format::sniff(&jpeg_bytes(8, 8)), Some(Format::Jpeg));
    assert_eq!(Format::sniff(b"GIF89a...."), Some(Format::Gif));
    assert_eq!(Format::sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(Format::WebP));
    assert_eq!(Format::sniff(b"RIFF\0\0\0\0WAVEfmt "), None);
    assert_eq!(Format::sniff(b"hello"), None);
    assert!(has_image_extension("a/B.JPEG") && !has_image_extension("a.svg"));
}

#[test]
fn a_large_screenshot_is_scaled_stored_once_and_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ImageStore::new(tmp.path().join("images"));
    let big = png_bytes(2560, 1440);
    let p = store.add(&big, "/home/me/shot.png").unwrap();
    assert_eq!((p.source_width, p.source_height), (2560, 1440));
    assert_eq!((p.image.width, p.image.height), fit(2560, 1440));
    assert_eq!(p.image.name, "shot.png");
    assert_eq!(
        p.image.chip(),
        format!("[image: shot.png {}×{}]", p.image.width, p.image.height)
    );
    assert_eq!(
        p.image.tokens(),
        (u64::from(p.image.width) * u64::from(p.image.height)).div_ceil(750)
    );
    let stored = std::fs::read(&p.image.path).unwrap();
    let decoded = image::load_from_memory(&stored).unwrap();
    assert_eq!(
        (decoded.width(), decoded.height()),
        (p.image.width, p.image.height)
    );
    assert!(p.describe().contains("sent scaled to"), "{}", p.describe());
    // The same bytes again: the same file, not a second one.
    let again = store.add(&big, "copy.png").unwrap();
    assert_eq!(again.image.path, p.image.path);
    assert_eq!(again.image.name, "copy.png");
    assert_eq!(std::fs::read_dir(store.dir()).unwrap().count(), 1);
}

#[test]
fn a_small_image_is_kept_as_it_is_and_a_photo_stays_a_jpeg() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ImageStore::new(tmp.path());
    let small = png_bytes(64, 32);
    let p = store.add(&small, "s.png").unwrap();
    assert_eq!(std::fs::read(&p.image.path).unwrap(), small);
    assert_eq!(p.image.media_type, "image/png");
    assert!(p.describe().contains("sent as it is"));
    let photo = jpeg_bytes(3000, 2000);
    let p = store.add(&photo, "photo.jpg").unwrap();
    assert_eq!(p.image.media_type, "image/jpeg");
    assert!(p.stored_bytes < photo.len() as u64);
}

#[test]
fn what_is_not_an_image_is_refused_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ImageStore::new(tmp.path());
    assert_eq!(
        store.add(b"plain text", "a.png"),
        Err(ImageError::NotAnImage)
    );
    let mut broken = png_bytes(40, 40);
    broken.truncate(60);
    let e = store.add(&broken, "b.png").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("the PNG image could not be decoded"),
        "{e}"
    );
}

/// A PNG whose header claims `w × h` (CRC right, no pixels): what a decompression bomb starts
/// with.
fn png_claiming(w: u32, h: u32) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFFu32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = b"IHDR".to_vec();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    out.extend_from_slice(&13u32.to_be_bytes());
    out.extend_from_slice(&ihdr);
    out.extend_from_slice(&crc32(&ihdr).to_be_bytes());
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(b"IEND");
    out.extend_from_slice(&crc32(b"IEND").to_be_bytes());
    out
}

#[test]
fn a_bomb_and_a_huge_file_are_refused_before_they_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ImageStore::new(tmp.path().join("images"));
    // 100,000 × 100,000 pixels would be 30 GB decoded: the header alone refuses it.
    let e = store
        .add(&png_claiming(100_000, 100_000), "bomb.png")
        .unwrap_err();
    assert!(matches!(e, ImageError::Decode { .. }), "{e}");
    // A 51 MB file (sparse: nothing is written but its first bytes) is not read at all.
    let huge = tmp.path().join("huge.png");
    let f = std::fs::File::create(&huge).unwrap();
    std::io::Write::write_all(&mut &f, &png_bytes(4, 4)).unwrap();
    f.set_len(51 * 1024 * 1024).unwrap();
    let e = store.add_file(&huge, "huge.png").unwrap_err();
    assert_eq!(e, ImageError::TooLarge(51 * 1024 * 1024));
    assert_eq!(
        e.to_string(),
        "the file is 51.0 MB, more than the 50 MB an image may have"
    );
    assert!(!store.dir().exists(), "nothing was stored");
}

#[test]
fn an_image_counts_width_times_height_over_750_in_the_gauge() {
    use crate::engine::types::{Block, Message, Role};
    let image = ImageRef {
        name: "shot.png".into(),
        source: String::new(),
        path: "/run/images/x.png".into(),
        media_type: "image/png".into(),
        width: 1429,
        height: 804,
    };
    assert_eq!(image.tokens(), 1532);
    let msg = Message {
        role: Role::User,
        content: vec![Block::text("look"), Block::image(image.clone())],
    };
    // The estimate divides characters by the default ratio: the image adds its tokens exactly.
    let per_token = crate::engine::tokens::DEFAULT_CHARS_PER_TOKEN as usize;
    assert_eq!(msg.char_len(), "look".len() + 1532 * per_token);
}

#[test]
fn gif_and_webp_are_taken_as_they_are() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ImageStore::new(tmp.path());
    let img = image::DynamicImage::ImageRgba8(image::RgbaImage::from_fn(40, 30, |x, y| {
        image::Rgba([(x * 6) as u8, (y * 8) as u8, 120, 255])
    }));
    for (format, media) in [
        (image::ImageFormat::Gif, "image/gif"),
        (image::ImageFormat::WebP, "image/webp"),
    ] {
        let mut bytes = Vec::new();
        img.write_to(&mut std::io::Cursor::new(&mut bytes), format)
            .unwrap();
        let p = store.add(&bytes, "anim").unwrap();
        assert_eq!(p.image.media_type, media);
        assert_eq!((p.image.width, p.image.height), (40, 30));
        assert_eq!(std::fs::read(&p.image.path).unwrap(), bytes);
    }
}
