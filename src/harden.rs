//! Process hardening at start-up, so the API key never leaks from the process: the provider keys
//! leave flower-tui's environment (and its `/proc/<pid>/environ`), and the process becomes
//! non-dumpable, as ssh-agent does, so another process of the same user can neither read its
//! memory nor attach a debugger.

use crate::engine::secrets::PROVIDER_KEY_VARS;

/// Remove every provider key from this process's environment and wipe its bytes from the
/// environment block the kernel shows as `/proc/<pid>/environ`; then make the process
/// non-dumpable. The values must have been read before (`Env::from_process`).
///
/// # Safety
/// Must be called at the very start of `main`, before any other thread exists: it changes the
/// process environment (`remove_var`) and writes into the memory `getenv` points at, which no other
/// code may be reading at the same time.
pub(crate) unsafe fn scrub_keys_and_lock_down() {
    for name in PROVIDER_KEY_VARS {
        // SAFETY: single-threaded (the caller's contract), so nothing reads the environment while
        // it changes.
        unsafe {
            wipe_value(name);
            std::env::remove_var(name);
        }
    }
    non_dumpable();
}

/// Overwrite the bytes of `name`'s value in place (the initial environment block is what
/// `/proc/<pid>/environ` shows; `remove_var` alone only unlinks it from `environ`).
///
/// # Safety
/// No other thread may use the environment meanwhile.
#[cfg(unix)]
unsafe fn wipe_value(name: &str) {
    let Ok(cname) = std::ffi::CString::new(name) else {
        return;
    };
    // SAFETY: `cname` is a valid C string; getenv returns NULL or a pointer to the NUL-terminated
    // value inside the environment block, which is writable process memory of ours. We write only
    // the `strlen` bytes before its terminator, and the caller guarantees no concurrent access.
    unsafe {
        let value = libc::getenv(cname.as_ptr());
        if !value.is_null() {
            let len = libc::strlen(value);
            std::ptr::write_bytes(value, 0, len);
        }
    }
}

#[cfg(not(unix))]
unsafe fn wipe_value(_name: &str) {}

/// `prctl(PR_SET_DUMPABLE, 0)`: no core dumps, and `/proc/<pid>/{environ,mem,maps}` and ptrace are
/// closed to other processes of the same user. Children get it back at `exec`.
pub(crate) fn non_dumpable() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_DUMPABLE takes plain integers and has no memory effects.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the process is dumpable.
    #[cfg(target_os = "linux")]
    fn is_dumpable() -> bool {
        // SAFETY: prctl with PR_GET_DUMPABLE takes plain integers and returns the flag.
        let flag = unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
        flag != 0
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_process_becomes_non_dumpable() {
        non_dumpable();
        assert!(!is_dumpable());
    }
}
