//! Bytes for the terminal outside the drawn frame: the clipboard (OSC 52), the bell and desktop
//! notifications (OSC 9, OSC 777). Pure builders; the app writes them between frames. Inside tmux
//! an OSC is wrapped in tmux's passthrough so it reaches the outer terminal.

use crate::config::Notify;

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (what OSC 52 expects).
pub(crate) fn base64(data: &[u8]) -> String {
    let sym = |i: u32| char::from(B64.get((i & 63) as usize).copied().unwrap_or(b'A'));
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let n = (b(0) << 16) | (b(1) << 8) | b(2);
        out.push(sym(n >> 18));
        out.push(sym(n >> 12));
        out.push(if chunk.len() > 1 { sym(n >> 6) } else { '=' });
        out.push(if chunk.len() > 2 { sym(n) } else { '=' });
    }
    out
}

/// An OSC sequence, wrapped for tmux's passthrough when `tmux`.
fn osc(body: &str, tmux: bool) -> Vec<u8> {
    let seq = format!("\x1b]{body}\x07");
    if tmux {
        // Every ESC inside is doubled; the outer terminal gets the sequence as it is.
        format!("\x1bPtmux;{}\x1b\\", seq.replace('\x1b', "\x1b\x1b")).into_bytes()
    } else {
        seq.into_bytes()
    }
}

/// OSC 52: put `text` on the clipboard.
pub(crate) fn clipboard(text: &str, tmux: bool) -> Vec<u8> {
    osc(&format!("52;c;{}", base64(text.as_bytes())), tmux)
}

/// Text safe inside an OSC string: no control characters (an ESC or BEL would end it early).
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The bytes that signal the end of a long turn, or nothing with [`Notify::Off`].
pub(crate) fn notification(mode: Notify, message: &str, tmux: bool) -> Vec<u8> {
    match mode {
        Notify::Off => Vec::new(),
        Notify::Bell => b"\x07".to_vec(),
        Notify::Osc9 => osc(&format!("9;{}", clean(message)), tmux),
        Notify::Osc777 => osc(
            &format!("777;notify;flower-tui;{}", clean(message).replace(';', ",")),
            tmux,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    #[test]
    fn sequences() {
        assert_eq!(clipboard("hi", false), b"\x1b]52;c;aGk=\x07");
        assert_eq!(
            clipboard("hi", true),
            b"\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\".to_vec()
        );
        assert_eq!(notification(Notify::Bell, "x", false), b"\x07");
        assert!(notification(Notify::Off, "x", false).is_empty());
        assert_eq!(
            notification(Notify::Osc9, "done\x1b[31m", false),
            b"\x1b]9;done [31m\x07".to_vec()
        );
        assert_eq!(
            notification(Notify::Osc777, "a;b", false),
            b"\x1b]777;notify;flower-tui;a,b\x07".to_vec()
        );
    }
}
