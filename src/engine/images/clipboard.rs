//! An image from the system clipboard, through the helper programs the platform has: `wl-paste`
//! (Wayland) or `xclip` (X11) on Linux, `pngpaste` or `osascript` on macOS. No clipboard crate:
//! the helpers are small, and a machine without one gets a clear message saying which to install.
//! The image is written to a new PNG file whose path the front end puts into the message.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a helper may take to answer.
const HELPER_TIMEOUT: Duration = Duration::from_secs(3);
/// The most a helper's answer may hold.
const MAX_BYTES: usize = super::MAX_SOURCE_BYTES as usize;

/// A way to read the clipboard: a program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Helper {
    pub program: &'static str,
    /// Lists the clipboard's types (None: ask for the image directly).
    pub list: Option<&'static [&'static str]>,
    pub read: &'static [&'static str],
}

const WL_PASTE: Helper = Helper {
    program: "wl-paste",
    list: Some(&["--list-types"]),
    read: &["--no-newline", "--type", "image/png"],
};
const XCLIP: Helper = Helper {
    program: "xclip",
    list: Some(&["-selection", "clipboard", "-t", "TARGETS", "-o"]),
    read: &["-selection", "clipboard", "-t", "image/png", "-o"],
};
const PNGPASTE: Helper = Helper {
    program: "pngpaste",
    list: None,
    read: &["-"],
};
const OSASCRIPT: Helper = Helper {
    program: "osascript",
    list: None,
    read: &["-e", "the clipboard as «class PNGf»"],
};

/// The helpers worth trying here, in order: what the session runs under (`WAYLAND_DISPLAY`,
/// `DISPLAY`, macOS) and what `PATH` holds.
pub fn helpers(
    wayland: bool,
    x11: bool,
    macos: bool,
    on_path: impl Fn(&str) -> bool,
) -> Vec<Helper> {
    let mut wanted = Vec::new();
    if macos {
        wanted.extend([PNGPASTE, OSASCRIPT]);
    }
    if wayland {
        wanted.push(WL_PASTE);
    }
    if x11 {
        wanted.push(XCLIP);
    }
    wanted.into_iter().filter(|h| on_path(h.program)).collect()
}

/// What to install (or why nothing can work) when no helper is there.
pub fn missing_helper_message(wayland: bool, x11: bool, macos: bool) -> String {
    if macos {
        "no clipboard helper found: install pngpaste (brew install pngpaste), or drop the image \
         file on the terminal, or type @path"
            .into()
    } else if wayland {
        "no clipboard helper found: install wl-clipboard (wl-paste), or drop the image file on \
         the terminal, or type @path"
            .into()
    } else if x11 {
        "no clipboard helper found: install xclip, or drop the image file on the terminal, or \
         type @path"
            .into()
    } else {
        "no clipboard is reachable from this terminal (no Wayland or X11 display): drop the image \
         file on the terminal, or type @path"
            .into()
    }
}

/// Whether `program` is an executable file in one of `PATH`'s folders.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            let p = dir.join(program);
            p.is_file()
        })
    })
}

/// Read an image from the clipboard and write it to a new PNG file in `dir`. The error says why
/// not, in words for the user (no helper, no image on the clipboard, a helper that failed).
pub fn paste_to_file(dir: &Path) -> Result<PathBuf, String> {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some();
    let x11 = std::env::var_os("DISPLAY").is_some();
    let macos = cfg!(target_os = "macos");
    let found = helpers(wayland, x11, macos, on_path);
    if found.is_empty() {
        return Err(missing_helper_message(wayland, x11, macos));
    }
    let mut why = String::from("the clipboard holds no image");
    for helper in &found {
        match read_with(helper) {
            Ok(bytes) => return save(dir, &bytes),
            Err(e) => why = e,
        }
    }
    Err(why)
}

/// The clipboard's PNG through one helper.
fn read_with(helper: &Helper) -> Result<Vec<u8>, String> {
    if let Some(list) = helper.list {
        let types = run(helper.program, list)?;
        let types = String::from_utf8_lossy(&types);
        if !types.lines().any(|t| t.trim() == "image/png") {
            return Err("the clipboard holds no image (copy a screenshot first)".into());
        }
    }
    let out = run(helper.program, helper.read)?;
    let bytes = if helper.program == OSASCRIPT.program {
        from_applescript(&String::from_utf8_lossy(&out))
            .ok_or("the clipboard holds no image (copy a screenshot first)")?
    } else {
        out
    };
    if super::Format::sniff(&bytes).is_none() {
        return Err("the clipboard holds no image (copy a screenshot first)".into());
    }
    Ok(bytes)
}

/// Run a helper to its end (or [`HELPER_TIMEOUT`]); its stdout, or why it failed.
fn run(program: &str, args: &[&str]) -> Result<Vec<u8>, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{program} could not start: {e}"))?;
    let mut stdout = child.stdout.take().ok_or("no output")?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut stdout)
            .take(MAX_BYTES as u64 + 1)
            .read_to_end(&mut buf);
        buf
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < HELPER_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{program} did not answer within 3 s"));
            }
            Err(e) => return Err(format!("{program} failed: {e}")),
        }
    };
    let out = reader.join().unwrap_or_default();
    if !status.success() {
        return Err("the clipboard holds no image (copy a screenshot first)".into());
    }
    if out.len() > MAX_BYTES {
        return Err("the clipboard's image is larger than 50 MB".into());
    }
    Ok(out)
}

/// The bytes of AppleScript's `«data PNGf89504E47…»`.
pub fn from_applescript(text: &str) -> Option<Vec<u8>> {
    let start = text.find("«data PNGf")? + "«data PNGf".len();
    let hex = text.get(start..)?.split('»').next()?;
    let hex: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    hex.chunks(2)
        .map(|pair| {
            let s = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(s, 16).ok()
        })
        .collect()
}

/// Write the pasted image to a new file in `dir`.
fn save(dir: &Path, bytes: &[u8]) -> Result<PathBuf, String> {
    let (secs, nanos) = crate::engine::fsutil::now_unix();
    let names = (0..1000).map(|n| format!("pasted-{secs}-{nanos}-{n}.png"));
    crate::engine::fsutil::write_new(dir, names, bytes)
        .map(|f| f.path)
        .map_err(|e| {
            format!(
                "the pasted image could not be saved in {}: {e}",
                dir.display()
            )
        })
}

/// Where pasted images are written before they are attached (the attachment stores them in the
/// run's image store).
pub fn paste_dir() -> PathBuf {
    std::env::temp_dir().join("flower-pasted")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_follow_the_session_and_what_is_installed() {
        let all = |_: &str| true;
        assert_eq!(helpers(true, true, false, all), vec![WL_PASTE, XCLIP]);
        assert_eq!(helpers(false, true, false, all), vec![XCLIP]);
        assert_eq!(helpers(false, false, true, all), vec![PNGPASTE, OSASCRIPT]);
        let only_osascript = |p: &str| p == "osascript";
        assert_eq!(helpers(false, false, true, only_osascript), vec![OSASCRIPT]);
        assert!(helpers(true, true, false, |_| false).is_empty());
        assert!(missing_helper_message(true, false, false).contains("wl-clipboard"));
        assert!(missing_helper_message(false, true, false).contains("xclip"));
        assert!(missing_helper_message(false, false, true).contains("pngpaste"));
        assert!(missing_helper_message(false, false, false).contains("no Wayland or X11"));
    }

    #[test]
    fn applescript_data_is_read_as_bytes() {
        assert_eq!(
            from_applescript("«data PNGf89504E47»\n"),
            Some(vec![0x89, 0x50, 0x4E, 0x47])
        );
        assert_eq!(from_applescript("some text"), None);
        assert_eq!(from_applescript("«data PNGf895»"), None);
    }
}
