//! Headless `--output text` prints the model's answer without its escape sequences (OSC 0 sets
//! the title, OSC 52 the clipboard, CSI colours), as every other output path does.

use crate::support::fake::{FakeServer, U, anthropic as a};
use crate::support::headless::{bin_for, run};

#[tokio::test]
async fn headless_text_output_strips_the_models_escape_sequences() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("ws")).unwrap();
    let server = FakeServer::start().await;
    server.push(a::text(
        "plain \u{1b}]52;c;UFdORUQ=\u{7}\u{1b}]0;PWNED\u{7}\u{1b}[31mred\u{1b}[0m \u{1b}[2J end",
        U::new(100, 10),
    ));
    let mut c = bin_for(home.path(), &server);
    c.args(["--workspace", home.path().join("ws").to_str().unwrap()])
        .args(["-p", "hi", "--output", "text"]);
    let out = run(c).await.success().output;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.stdout.iter().any(|&b| b == 0x1b || b == 0x07),
        "escape bytes on stdout: {stdout:?}"
    );
    assert_eq!(stdout.trim_end(), "plain red  end");
}
