//! Images and web pages (`perf eyes`): the request that carries one screenshot, before and after
//! scaling (and the time to scale it); the time and memory to fetch and convert a large page with
//! `web_fetch` from a local server.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flower_tui::engine::images::{ImageRef, ImageStore};
use flower_tui::engine::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use flower_tui::engine::provider::openai::{OpenAiConfig, OpenAiProvider};
use flower_tui::engine::tools::{self, ToolCtx, web_fetch::WebAccess};
use flower_tui::engine::types::{Block, Message, ModelRequest, Role, ToolChoice};

pub fn run() {
    // The page first: its peak memory is read before the images raise the process's peak.
    page_fetch();
    screenshot_request();
}

/// A screenshot-like picture: a window frame, panels, rows of glyph-like strokes (text), a few
/// coloured buttons — compressing roughly as a real UI capture does.
fn screenshot(w: u32, h: u32) -> image::RgbImage {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut img = image::RgbImage::from_pixel(w, h, image::Rgb([246, 247, 249]));
    for y in 0..60.min(h) {
        for x in 0..w {
            img.put_pixel(x, y, image::Rgb([36, 41, 47]));
        }
    }
    for y in 60..h {
        for x in 0..(w / 5) {
            img.put_pixel(x, y, image::Rgb([230, 233, 237]));
        }
    }
    // Text: rows of 14 px glyph cells, each a few random strokes.
    let mut y = 90;
    while y + 16 < h {
        let indent = w / 5 + 30 + (rnd() % 4) as u32 * 24;
        let len = 200 + (rnd() % (u64::from(w) * 3 / 5)) as u32;
        let mut x = indent;
        while x + 9 < (indent + len).min(w - 10) {
            if rnd() % 7 == 0 {
                x += 9; // a space
                continue;
            }
            for _ in 0..6 {
                let gx = x + (rnd() % 8) as u32;
                let gy = y + (rnd() % 14) as u32;
                img.put_pixel(gx, gy, image::Rgb([40, 44, 52]));
                img.put_pixel(gx, gy + 1, image::Rgb([90, 96, 104]));
            }
            x += 9;
        }
        y += 24 + if rnd() % 9 == 0 { 30 } else { 0 };
    }
    for (bx, by) in [(w - 300, 80), (w - 160, 80)] {
        for y in by..by + 36 {
            for x in bx..bx + 120 {
                img.put_pixel(x, y, image::Rgb([31, 136, 61]));
            }
        }
    }
    img
}

fn body_bytes(image: &ImageRef) -> (usize, usize) {
    let req = ModelRequest {
        model: "claude-sonnet-4-5".into(),
        system: String::new(),
        messages: vec![Message {
            role: Role::User,
            content: vec![
                Block::text("What is wrong with this page?"),
                Block::image(image.clone()),
            ],
        }],
        tools: Vec::new(),
        tool_choice: ToolChoice::Auto,
        max_tokens: 1024,
        effort: None,
    };
    let a = AnthropicProvider::new(AnthropicConfig::default()).request_body(&req);
    let o = OpenAiProvider::new(OpenAiConfig::default()).request_body(&req);
    (
        serde_json::to_vec(&a).unwrap().len(),
        serde_json::to_vec(&o).unwrap().len(),
    )
}

fn screenshot_request() {
    let dir = tempfile::tempdir().unwrap();
    for (w, h) in [(2880, 1800), (1920, 1080)] {
        let path = dir.path().join(format!("shot-{w}x{h}.png"));
        screenshot(w, h).save(&path).unwrap();
        let source_bytes = std::fs::metadata(&path).unwrap().len();
        // Before: the file as it is (what a client that does not scale sends).
        let raw = ImageRef {
            name: "shot.png".into(),
            source: String::new(),
            path: path.clone(),
            media_type: "image/png".into(),
            width: w,
            height: h,
        };
        let (before_a, before_o) = body_bytes(&raw);
        let mut times = Vec::new();
        let mut prepared = None;
        for i in 0..5 {
            // A fresh store each time: the scaling is measured, not the store's lookup.
            let store = ImageStore::new(dir.path().join(format!("store-{w}-{i}")));
            let t = Instant::now();
            prepared = Some(store.add_file(&path, "shot.png").unwrap());
            times.push(t.elapsed());
        }
        times.sort();
        let p = prepared.unwrap();
        let (after_a, after_o) = body_bytes(&p.image);
        println!(
            "screenshot {w}×{h} PNG ({} KB): request body {} KB before scaling ({} tokens at \
             w×h/750), {} KB after ({}×{} {}, {} KB stored, {} tokens); OpenAI body {} KB → {} KB; \
             scaling took {:.0} ms median (fastest {:.0} ms, n = 5)",
            source_bytes / 1024,
            before_a / 1024,
            raw.tokens(),
            after_a / 1024,
            p.image.width,
            p.image.height,
            p.image.media_type,
            p.stored_bytes / 1024,
            p.image.tokens(),
            before_o / 1024,
            after_o / 1024,
            ms(times[2]),
            ms(times[0]),
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A large documentation page: navigation, scripts, and 400 sections of prose, lists, code and
/// tables (about 1.3 MB of HTML).
fn large_page() -> String {
    let mut s = String::from(
        "<!doctype html><html><head><title>Big reference</title><style>body{font:14px sans-serif}</style>\
         <script>var analytics = {};</script></head><body><header><nav>",
    );
    for i in 0..300 {
        s.push_str(&format!("<a href=\"/nav/{i}\">Link {i}</a> "));
    }
    s.push_str("</nav></header><main>");
    for i in 0..400 {
        s.push_str(&format!(
            "<h2 id=\"s{i}\">Section {i}</h2><p>This section explains the <code>option_{i}</code> \
             setting in detail, with <a href=\"https://example.com/ref/{i}\">a reference</a> and \
             <em>emphasis</em>. {}</p><ul><li>first point {i}</li><li>second point</li>\
             <li>third point with <strong>bold</strong></li></ul><pre><code class=\"language-rust\">\
             fn example_{i}() -> u32 {{\n    let x = {i};\n    x * 2\n}}\n</code></pre>\
             <table><tr><th>key</th><th>value</th><th>notes</th></tr>",
            "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(40)
        ));
        for r in 0..8 {
            s.push_str(&format!(
                "<tr><td>k{r}</td><td>{}</td><td>n{i}</td></tr>",
                r * i
            ));
        }
        s.push_str("</table><script>track(\"section\");</script>");
    }
    s.push_str("</main><footer>footer</footer></body></html>");
    s
}

/// A one-page HTTP server on a thread (one request per connection).
fn serve(page: Arc<String>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut sock) = conn else { return };
            let mut buf = [0u8; 4096];
            let _ = sock.read(&mut buf);
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n",
                page.len()
            );
            let _ = sock.write_all(head.as_bytes());
            let _ = sock.write_all(page.as_bytes());
        }
    });
    port
}

/// The process's peak resident memory so far (kB), from `/proc/self/status`.
fn peak_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn page_fetch() {
    let page = Arc::new(large_page());
    let port = serve(page.clone());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let ctx = ToolCtx {
        web: WebAccess::new(vec![format!("127.0.0.1:{port}")]),
        ..ToolCtx::new(ws.path(), "bench")
    };
    let before = peak_kb();
    let mut times = Vec::new();
    let mut out_chars = 0;
    for i in 0..7 {
        // A new query each time: the page cache would answer a URL fetched already.
        let input = serde_json::json!({ "url": format!("http://127.0.0.1:{port}/ref?n={i}") });
        let t = Instant::now();
        let out = rt.block_on(tools::run("web_fetch", &input, &ctx));
        times.push(t.elapsed());
        assert!(!out.is_error, "{}", out.content);
        assert!(!out.content.contains("track(") && !out.content.contains("Link 299"));
        out_chars = out.content.chars().count();
    }
    let peak = peak_kb();
    times.sort();
    println!(
        "web_fetch of a {:.1} MB HTML page from a local server → {} KB of Markdown: {:.0} ms \
         median (fastest {:.0} ms, n = 7); peak RSS grew {:.1} MB over the fetches",
        page.len() as f64 / 1e6,
        out_chars / 1024,
        ms(times[3]),
        ms(times[0]),
        peak.saturating_sub(before) as f64 / 1024.0,
    );
}
