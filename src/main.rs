//! The `flower-tui` binary: everything is in the library's [`flower_tui::start`].

fn main() {
    // SAFETY: the very start of main, before the async runtime or anything else starts a thread.
    let code = unsafe { flower_tui::start::run() };
    std::process::exit(code);
}
