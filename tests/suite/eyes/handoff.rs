//! A handoff carries images by path, not by bytes: the document's `## Touched` lists each image
//! the generation showed the model with its stored copy, the successor's briefing names that copy,
//! and the successor's `read_file` of it needs no approval and shows the image again.

use flower_tui::engine::protocol::{Event, HandoffPhase};

use crate::support::fake::{U, anthropic as a};
use crate::support::harness::{Harness, all_files, start};

const DOC: &str = "## Doing\nFixing the cut-off button.\n\n## Decided\n- CSS only.\n\n## Dead ends\n- none\n\n## Next\nWiden the container.\n\n## Scene\n- ui.css\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_successor_gets_the_image_by_its_stored_path() {
    let h = Harness::new().await;
    let img = image::RgbImage::from_fn(800, 600, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 7])
    });
    img.save(h.workspace.join("ui.png")).unwrap();
    h.server
        .push(a::text("The button is cut off.", U::new(2_000, 10)));
    let mut r = start(h.params(200_000, 20_000));
    r.turn("what is wrong in @ui.png").await;
    let stored = all_files(&r.run_root.join("images")).pop().unwrap();

    h.server.push(a::text(DOC, U::new(2_500, 10)));
    let turn = r.send_handoff(None).await;
    let ev = r
        .until(|e| matches!(e, Event::Handoff(HandoffPhase::Done { .. })))
        .await;
    let Some(Event::Handoff(HandoffPhase::Done {
        path: Some(doc), ..
    })) = ev.last().cloned()
    else {
        panic!("{ev:#?}")
    };
    r.until_end(turn).await;
    let text = std::fs::read_to_string(&doc).unwrap();
    let touched = text.split("## Touched").nth(1).unwrap();
    assert!(touched.contains("Images shown to the model"), "{touched}");
    assert!(
        touched.contains(&format!("`ui.png`, stored at `{}`", stored.display())),
        "{touched}"
    );
    assert!(!text.contains("iVBORw0KGgo"), "image bytes in the document");

    // The successor reads the stored copy: no approval (the harness has none to give beyond
    // the workspace), and the image comes back.
    let call = serde_json::json!({ "path": stored.display().to_string() }).to_string();
    h.server
        .push(a::tool_use("r1", "read_file", &call, U::new(3_000, 10)));
    h.server.push(a::text("I see it again.", U::new(4_000, 10)));
    r.turn("look at the picture again").await;
    let reqs = h.server.requests();
    let briefing = reqs[reqs.len() - 2]["messages"][0].to_string();
    assert!(
        briefing.contains(&stored.display().to_string()),
        "{briefing}"
    );
    let result = &a::tool_results(reqs.last().unwrap())[0];
    let content = result["content"].as_array().unwrap();
    assert_eq!(content[1]["type"], "image", "{result}");
    r.shutdown().await;
}
