//! The environment of a confined command: without the network, no variable that names a local
//! service; `TMPDIR` pointed at a temp dir it may write; git's automatic maintenance in the
//! foreground.

use std::path::Path;

use super::{NetworkAccess, SandboxPolicy};

/// Variables that name a local service's socket or display: with them a command could find a
/// tmux server, an ssh or gpg agent, the D-Bus session, an X or Wayland display, a container
/// daemon, a terminal's or an editor's remote control, and ask it to act outside the sandbox.
/// The sandbox refuses Unix sockets with the network off anyway; these go too, so programs do not
/// try and fail, and fall back to working alone.
pub const SERVICE_VARIABLES: [&str; 31] = [
    "TMUX",
    "TMUX_PANE",
    "STY",
    "ZELLIJ",
    "ZELLIJ_SESSION_NAME",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "GNOME_KEYRING_CONTROL",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "AT_SPI_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "EMACS_SOCKET_NAME",
    "VSCODE_IPC_HOOK_CLI",
    "VSCODE_GIT_IPC_HANDLE",
    "SWAYSOCK",
    "I3SOCK",
    "NIRI_SOCKET",
    "HYPRLAND_INSTANCE_SIGNATURE",
    "PULSE_SERVER",
    "NOTIFY_SOCKET",
];

/// The environment of a confined command: without the network, no variable that names a local
/// service ([`SERVICE_VARIABLES`]); `TMPDIR` pointed at a temp dir it may write when the usual
/// one was left out because it holds the workspace.
#[cfg(any(target_os = "linux", target_os = "macos"))]
pub(super) fn confined_environment(
    cmd: &mut tokio::process::Command,
    policy: &SandboxPolicy,
    ws: &Path,
) {
    if policy.network == NetworkAccess::Blocked {
        for var in SERVICE_VARIABLES {
            cmd.env_remove(var);
        }
    }
    if let Some(tmp) = policy.writable_set(ws).tmpdir {
        cmd.env("TMPDIR", tmp);
    }
}

/// git detaches its automatic maintenance after a commit or a fetch into a session of its own; the
/// sandbox refuses that `setsid`, and git would print `fatal: setsid failed` after every commit.
/// Run it in the foreground instead (it does nothing unless the repository needs it), through
/// git's environment configuration, unless the user's environment already uses that.
#[cfg(target_os = "linux")]
pub(super) fn git_maintenance_in_the_foreground(cmd: &mut tokio::process::Command) {
    if std::env::var_os("GIT_CONFIG_COUNT").is_some() {
        return;
    }
    cmd.env("GIT_CONFIG_COUNT", "2")
        .env("GIT_CONFIG_KEY_0", "gc.autoDetach")
        .env("GIT_CONFIG_VALUE_0", "false")
        .env("GIT_CONFIG_KEY_1", "maintenance.autoDetach")
        .env("GIT_CONFIG_VALUE_1", "false");
}
