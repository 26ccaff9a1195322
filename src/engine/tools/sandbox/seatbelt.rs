//! The sandbox on macOS: the policy as a `sandbox-exec` profile (SBPL). Generated on every
//! platform so its text is tested everywhere; only macOS runs it.
//!
//! The profile allows by default and then denies what the policy takes away, the same shape as the
//! Linux sandbox (reads everywhere): every write except below the writable paths, and with the
//! network off every network operation, connecting to a Unix socket included (a host service would
//! act outside the sandbox), but binding one; signals only within the sandbox. Paths are passed as
//! `-D WRITABLE_<i>=<path>` parameters, never spliced into the text, so no path can change the
//! profile. macOS resolves symlinks before it matches, so the paths are canonical (`/tmp` is
//! `/private/tmp` there), as [`super::WritableSet`] makes them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{NetworkAccess, SandboxPolicy, WritableSet};

/// The program that applies a profile and runs a command under it.
#[cfg(target_os = "macos")]
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// A profile and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub text: String,
    /// `(name, path)`: each `(param "name")` of the text.
    pub params: Vec<(String, PathBuf)>,
}

impl Profile {
    /// `sandbox-exec`'s arguments before the command: `-p TEXT -D NAME=PATH …`.
    pub fn args(&self) -> Vec<OsString> {
        let mut args = vec![OsString::from("-p"), OsString::from(&self.text)];
        for (name, path) in &self.params {
            let mut def = OsString::from(format!("{name}="));
            def.push(path.as_os_str());
            args.push("-D".into());
            args.push(def);
        }
        args
    }
}

/// The profile of `policy` for a command in `workspace`.
pub fn profile(policy: &SandboxPolicy, workspace: &Path) -> Profile {
    render(&policy.writable_set(workspace), policy.network)
}

/// The profile that allows writes in `writable` only and, with `network` blocked, no network
/// and no connection to a Unix socket. Pure: the same input gives the same text.
pub fn render(writable: &WritableSet, network: NetworkAccess) -> Profile {
    let mut text = String::from(
        "(version 1)\n\
         (allow default)\n\
         ; Writes only below the writable paths.\n\
         (deny file-write*)\n",
    );
    let params: Vec<(String, PathBuf)> = writable
        .paths()
        .enumerate()
        .map(|(i, p)| (format!("WRITABLE_{i}"), p.to_path_buf()))
        .collect();
    if !params.is_empty() {
        text.push_str("(allow file-write*");
        for (name, _) in &params {
            text.push_str(&format!("\n  (subpath (param \"{name}\"))"));
        }
        // The pseudo-terminals a program may open (their names are not known in advance).
        text.push_str("\n  (regex #\"^/dev/ttys[0-9]+$\"))\n");
    }
    if network == NetworkAccess::Blocked {
        text.push_str(
            "; No network, and no connection to a Unix socket (a host service).\n\
             (deny network*)\n\
             (allow network* (local unix-socket))\n",
        );
    }
    text.push_str(
        "; No signals to processes outside the sandbox.\n\
         (deny signal)\n\
         (allow signal (target same-sandbox))\n",
    );
    Profile { text, params }
}

#[cfg(test)]
#[path = "seatbelt_tests.rs"]
mod tests;
