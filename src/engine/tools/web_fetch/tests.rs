use super::*;

#[test]
fn listed_hosts_may_be_private() {
    let access = WebAccess::new(vec![
        "localhost:3000".into(),
        "DevBox".into(),
        "[::1]:8080".into(),
    ]);
    assert!(access.allows_private("localhost", 3000));
    assert!(!access.allows_private("localhost", 3001));
    assert!(access.allows_private("devbox", 22));
    assert!(access.allows_private("[::1]", 8080));
    assert!(!access.allows_private("127.0.0.1", 3000));
}

#[test]
fn only_http_urls_with_a_host() {
    assert!(parse_url("https://docs.rs/x").is_ok());
    for bad in ["file:///etc/passwd", "ftp://h/x", "docs.rs", "http://"] {
        assert!(parse_url(bad).is_err(), "{bad}");
    }
    assert!(matches!(
        Kind::of("text/html; charset=utf-8"),
        Ok(Kind::Html)
    ));
    assert!(matches!(Kind::of("application/json"), Ok(Kind::Text)));
    assert!(matches!(Kind::of("application/pdf"), Ok(Kind::Pdf)));
    let url = |u: &str| Url::parse(u).unwrap();
    assert!(Kind::may_be_pdf(
        "application/octet-stream",
        &url("https://h/x")
    ));
    assert!(Kind::may_be_pdf("image/png", &url("https://h/paper.PDF")));
    assert!(!Kind::may_be_pdf("image/png", &url("https://h/x.png")));
}

#[test]
fn pages_are_read_in_their_charset() {
    let latin1 = b"<p>caf\xe9 cr\xe8me</p>";
    assert_eq!(
        decode(latin1, "text/html; charset=ISO-8859-1", true),
        "<p>café crème</p>"
    );
    let meta = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1252\"></head><p>\x93quoted\x94</p>";
    assert!(decode(meta, "text/html", true).contains("\u{201c}quoted\u{201d}"));
    let sjis = b"<meta charset='Shift_JIS'><p>\x93\xfa\x96\x7b</p>";
    assert!(decode(sjis, "", true).contains("日本"));
    assert_eq!(decode("plain ü".as_bytes(), "text/plain", false), "plain ü");
    assert_eq!(
        decode(b"bad \xff byte", "text/plain", false),
        "bad \u{fffd} byte"
    );
    assert_eq!(
        charset("text/html; charset=\"utf-8\""),
        Some("utf-8".into())
    );
    assert_eq!(charset("text/html"), None);
}

#[test]
fn a_url_holding_a_secret_is_refused_without_repeating_it() {
    let key = "wf-test-secret-4f9a2c7e1b";
    crate::engine::secrets::register(key);
    for url in [
        format!("https://example.com/api?key={key}"),
        format!("https://{key}.example.com/"),
    ] {
        let e = parse_url(&url).unwrap_err();
        assert!(e.0.contains("holds a secret"), "{e:?}");
        assert!(!e.0.contains(key), "{e:?}");
        assert!(before_asking(&json!({ "url": url }), &WebAccess::default()).is_err());
    }
}

#[test]
fn before_asking_needs_no_dns() {
    let access = WebAccess::new(vec!["localhost:3000".into()]);
    let why = |u: &str| before_asking(&json!({ "url": u }), &access);
    assert_eq!(why("https://docs.rs/x").unwrap(), None);
    assert_eq!(why("http://localhost:3000/").unwrap(), None);
    assert!(
        why("http://localhost:3001/")
            .unwrap()
            .is_some_and(|w| w.contains("loopback"))
    );
    assert!(
        why("http://169.254.169.254/latest/meta-data/")
            .unwrap()
            .is_some_and(|w| w.contains("link-local"))
    );
    assert!(
        why("http://[::ffff:127.0.0.1]/")
            .unwrap()
            .is_some_and(|w| w.contains("loopback"))
    );
    assert!(why("ftp://x/").is_err());
}
