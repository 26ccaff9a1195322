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
