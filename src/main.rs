//! The `flower-tui` binary: parse the configuration, then run headless or the TUI.

use flower_tui::config::{self, Env};

fn main() {
    let env = Env::from_process();
    // SAFETY: the very start of main, before the async runtime or anything else starts a thread:
    // nothing else reads or writes the environment while the provider keys are wiped from it.
    // Their values live on in `env` (and, masked, in the secrets registry).
    unsafe { flower_tui::harden::scrub_keys_and_lock_down() };
    flower_tui::engine::secrets::register_env(env.0.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let mut config = match config::load(std::env::args(), &env) {
        Ok(c) => c,
        Err(e) => {
            let (line, code) = e.report();
            if code == 0 {
                print!("{line}");
            } else {
                eprintln!("{line}");
            }
            std::process::exit(code);
        }
    };
    // `-p -`: the task comes from stdin (a task too long for the command line).
    if config.prompt.as_deref() == Some("-") {
        match flower_tui::headless::task_from(std::io::stdin().lock()) {
            Ok(task) => config.prompt = Some(task),
            Err(e) => {
                eprintln!("flower-tui: -p -: {e}");
                std::process::exit(2);
            }
        }
    }
    // `-p ""` (or only blanks): refused as an empty stdin is, before anything starts; the provider
    // would reject an empty message with a less clear error.
    if config
        .prompt
        .as_deref()
        .is_some_and(|t| t.trim().is_empty())
    {
        eprintln!("flower-tui: -p: the task is empty");
        std::process::exit(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("flower-tui: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    // A local server states its own window: asked before `-v` reports it.
    runtime.block_on(flower_tui::server_window::ask(&mut config));
    if config.verbose {
        eprintln!("{}", config.verbose_report());
    }
    // Before the TUI takes the terminal: after that, nothing may be printed.
    match flower_tui::logging::init(&config.data_dir, config.log_level) {
        Ok(Some(path)) => flower_tui::launch::log_start(&config, &path),
        Ok(None) => {}
        Err(e) => eprintln!("flower-tui: {e}; running without a log file"),
    }
    let code = if config.prompt.is_some() {
        runtime.block_on(flower_tui::headless::run(config))
    } else {
        runtime.block_on(flower_tui::tui_main::run(config))
    };
    std::process::exit(code);
}
