//! `web_fetch` of a PDF through the engine against a real local web server, read by the real
//! `flower-tui pdf-text` child: a PDF's text reaches the tool result page by page (also a `.pdf`
//! served as `application/octet-stream`); a corrupt PDF and one without text are plain errors
//! and the turn goes on; a PDF whose stream unpacks to a gigabyte stops the reader at its memory
//! limit, or at its time limit when the memory is there.

use std::time::{Duration, Instant};

use flower_tui::engine::tools::web_fetch::{PdfReader, WebAccess};

use super::page_server::{Page, PageServer};
use super::web_fetch::fetch_turn;
use crate::support::harness::Harness;

/// One object of a hand-made PDF: a dictionary, or a stream (its extra dictionary entries and
/// its bytes).
enum Obj {
    Dict(String),
    Stream(String, Vec<u8>),
}

/// A PDF with one page per entry: the bytes of its content stream (with extra stream
/// dictionary entries such as a filter), or None for a page with no content at all. Text is
/// set in Helvetica (`/F1`). The cross-reference table holds the real offsets.
fn pdf(pages: Vec<Option<(String, Vec<u8>)>>) -> Vec<u8> {
    let kids: Vec<String> = (0..pages.len())
        .map(|i| format!("{} 0 R", 4 + 2 * i))
        .collect();
    let mut objs = vec![
        Obj::Dict("<< /Type /Catalog /Pages 2 0 R >>".into()),
        Obj::Dict(format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            pages.len()
        )),
        Obj::Dict(
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
                .into(),
        ),
    ];
    for (i, content) in pages.into_iter().enumerate() {
        let contents = match content {
            Some(_) => format!(" /Contents {} 0 R", 5 + 2 * i),
            None => String::new(),
        };
        objs.push(Obj::Dict(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
             /Resources << /Font << /F1 3 0 R >> >>{contents} >>"
        )));
        let (extra, data) = content.unwrap_or_default();
        objs.push(Obj::Stream(extra, data));
    }
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, obj) in objs.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        match obj {
            Obj::Dict(d) => out.extend_from_slice(d.as_bytes()),
            Obj::Stream(extra, data) => {
                out.extend_from_slice(
                    format!("<< /Length {}{extra} >>\nstream\n", data.len()).as_bytes(),
                );
                out.extend_from_slice(data);
                out.extend_from_slice(b"\nendstream");
            }
        }
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objs.len() + 1).as_bytes());
    for at in offsets {
        out.extend_from_slice(format!("{at:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objs.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A page showing `text` (plain ASCII, no parentheses).
fn text_page(text: &str) -> Option<(String, Vec<u8>)> {
    Some((
        String::new(),
        format!("BT /F1 24 Tf 72 720 Td ({text}) Tj ET").into_bytes(),
    ))
}

/// A page whose content stream (FlateDecode) unpacks to `mib` MiB of zero bytes from about a
/// thousandth of that: one compressed MiB, flushed to a byte boundary, repeated.
fn bomb_page(mib: u64) -> Option<(String, Vec<u8>)> {
    let mut c = flate2::Compress::new(flate2::Compression::best(), false);
    let mut chunk = Vec::with_capacity(64 * 1024);
    c.compress_vec(&vec![0u8; 1 << 20], &mut chunk, flate2::FlushCompress::Sync)
        .unwrap();
    assert_eq!(c.total_in(), 1 << 20);
    let mut zlib = vec![0x78, 0x01];
    for _ in 0..mib {
        zlib.extend_from_slice(&chunk);
    }
    // The last block: final, fixed codes, end of block at once.
    zlib.extend_from_slice(&[0x03, 0x00]);
    // Adler-32 of n zero bytes: a stays 1, b is n.
    let adler = (((mib << 20) % 65521) << 16) | 1;
    zlib.extend_from_slice(&(adler as u32).to_be_bytes());
    Some((" /Filter /FlateDecode".into(), zlib))
}

/// The real flower-tui as the PDF reader, with these limits.
fn reader(time: Duration, memory: u64) -> PdfReader {
    PdfReader {
        program: Some(env!("CARGO_BIN_EXE_flower-tui").into()),
        time,
        memory,
    }
}

fn access(site: &PageServer, reader: PdfReader) -> WebAccess {
    WebAccess::new(vec![format!("127.0.0.1:{}", site.port)]).with_pdf_reader(reader)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pdf_comes_back_as_its_text_page_by_page() {
    let doc = pdf(vec![
        text_page("Widgets are assembled in three steps"),
        text_page("Step two tightens every bolt"),
    ]);
    assert!(doc.len() < 1200, "{}", doc.len());
    let site = PageServer::start(vec![
        ("/manual.pdf", Page::typed("application/pdf", &doc)),
        // A PDF under a generic type is known by its first bytes.
        ("/get?id=7", Page::typed("application/octet-stream", &doc)),
    ])
    .await;
    let h = Harness::new().await;
    let web = access(&site, reader(Duration::from_secs(10), 1 << 30));
    for path in ["/manual.pdf", "/get?id=7"] {
        let (out, failed) = fetch_turn(&h, web.clone(), &site.url(path)).await;
        assert!(!failed, "{out}");
        assert!(
            out.starts_with(&format!("Source: {} (PDF, 2 pages)\n", site.url(path))),
            "{out}"
        );
        let first = out.find("Widgets are assembled in three steps");
        let second = out.find("--- page 2 ---\nStep two tightens every bolt");
        assert!(
            out.contains("--- page 1 ---\n") && first.is_some() && first < second,
            "{out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_pdf_or_one_without_text_is_a_plain_error() {
    let good = pdf(vec![text_page("fine")]);
    // The header of a PDF, then bytes of no PDF at all.
    let mut corrupt = b"%PDF-1.7\n".to_vec();
    corrupt.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    // A real PDF cut in the middle of its first object.
    let cut = good.get(..40).unwrap().to_vec();
    let site = PageServer::start(vec![
        ("/corrupt.pdf", Page::typed("application/pdf", &corrupt)),
        ("/cut.pdf", Page::typed("application/pdf", &cut)),
        (
            "/scan.pdf",
            Page::typed("application/pdf", &pdf(vec![None, None])),
        ),
        // A .pdf that is not one: refused as the type it is.
        (
            "/fake.pdf",
            Page::typed("image/png", b"\x89PNG\r\n\x1a\n..."),
        ),
    ])
    .await;
    let h = Harness::new().await;
    let web = access(&site, reader(Duration::from_secs(10), 1 << 30));
    for path in ["/corrupt.pdf", "/cut.pdf"] {
        // `fetch_turn` asserts the turn completed after the failed call.
        let (out, failed) = fetch_turn(&h, web.clone(), &site.url(path)).await;
        assert!(failed, "{out}");
        assert!(
            out.starts_with(&format!(
                "{} is a PDF whose text cannot be read: ",
                site.url(path)
            )),
            "{out}"
        );
        assert!(
            out.contains("malformed") && !out.contains("panicked"),
            "{out}"
        );
    }
    let (out, failed) = fetch_turn(&h, web.clone(), &site.url("/scan.pdf")).await;
    assert!(
        failed && out.contains("is a PDF with no text to read (2 pages, no text layer"),
        "{out}"
    );
    let (out, failed) = fetch_turn(&h, web, &site.url("/fake.pdf")).await;
    assert!(failed && out.contains("is an image (`image/png`)"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pdf_that_unpacks_to_a_gigabyte_is_stopped_at_a_limit() {
    let bomb = pdf(vec![text_page("before the bomb"), bomb_page(1024)]);
    assert!(bomb.len() < 3 << 20, "{}", bomb.len());
    let site = PageServer::start(vec![("/bomb.pdf", Page::typed("application/pdf", &bomb))]).await;
    let h = Harness::new().await;
    // The default memory limit: the reader asks for more and is stopped.
    let web = access(
        &site,
        reader(Duration::from_secs(60), PdfReader::default().memory),
    );
    let started = Instant::now();
    let (out, failed) = fetch_turn(&h, web, &site.url("/bomb.pdf")).await;
    assert!(failed, "{out}");
    assert!(
        out.contains("needed more than 1024 MB of memory, the limit"),
        "{out}"
    );
    eprintln!("memory limit reached after {:?}", started.elapsed());
    // Memory enough, but little time: killed when its time is up.
    let web = access(&site, reader(Duration::from_millis(500), 8 << 30));
    let started = Instant::now();
    let (out, failed) = fetch_turn(&h, web, &site.url("/bomb.pdf")).await;
    assert!(failed, "{out}");
    assert!(out.contains("took longer than 0.5 s, the limit"), "{out}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}
