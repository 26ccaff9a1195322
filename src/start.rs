//! The process's start, all that `main` calls: read the environment, take the provider keys out
//! of the process and lock it down, load the configuration (a bad flag, key or value is one line
//! and exit code 2; `--help` and `--version` print and exit 0), read a `-p -` task from stdin,
//! ask a local server for its window, print the `-v` report, open the log file, then run
//! headless (`-p`), the editors' protocol (`acp`) or the TUI. `flower-tui pdf-text` is none of
//! these: it reads a PDF on stdin and writes its text (the child `web_fetch` starts); nor is
//! `flower-tui checkpoint-feed`, the keeper of a workspace's change feed that checkpoints start.

use crate::config::{self, Env};

/// Start flower-tui and run it to its end; returns the process exit code.
///
/// # Safety
/// Must be called first thing in `main`, before any other thread exists: it changes the process
/// environment (see [`crate::harden::scrub_keys_and_lock_down`]).
pub unsafe fn run() -> i32 {
    // The PDF reader `web_fetch` starts: no configuration, no runtime, no terminal.
    if std::env::args().nth(1).as_deref() == Some(crate::engine::tools::web_fetch::pdf::COMMAND) {
        return crate::engine::tools::web_fetch::pdf::serve();
    }
    // The checkpoint feed's keeper a session starts: no configuration, no runtime, no terminal.
    if std::env::args().nth(1).as_deref() == Some(crate::engine::checkpoint::KEEPER_COMMAND) {
        return crate::engine::checkpoint::serve_keeper();
    }
    if let Ok(exe) = std::env::current_exe() {
        crate::engine::checkpoint::set_keeper_program(exe);
    }
    let env = Env::from_process();
    // SAFETY: the caller's contract: nothing else reads or writes the environment while the
    // provider keys are wiped from it. Their values live on in `env` (and, masked, in the secrets
    // registry).
    unsafe { crate::harden::scrub_keys_and_lock_down() };
    crate::engine::secrets::register_env(env.0.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let mut config = match config::load(std::env::args(), &env) {
        Ok(c) => c,
        Err(e) => {
            let (line, code) = e.report();
            if code == 0 {
                print!("{line}");
            } else {
                eprintln!("{line}");
            }
            return code;
        }
    };
    if let Err(code) = read_task(&mut config) {
        return code;
    }
    // A headless run's environment block (git status) is looked at beside the rest of the
    // start, from its very beginning; the demo's workspace is made later (headless looks there).
    if config.prompt.is_some() && !config.acp && !config.provider.backend.is_demo() {
        crate::headless::look_early(&config);
    }
    // The provider's client reads the system's TLS roots (for https): beside the rest of the start.
    if matches!(config.provider.backend, config::Backend::Api(_)) {
        crate::engine::provider::http::prepare_client(&config.provider.base_url);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("flower-tui: cannot start the async runtime: {e}");
            return 1;
        }
    };
    // A local server states its own window: asked before `-v` reports it.
    runtime.block_on(crate::server_window::ask(&mut config));
    if config.front.verbose {
        eprintln!("{}", config.verbose_report());
    }
    // Before the TUI takes the terminal: after that, nothing may be printed.
    match crate::logging::init(&config.places.data_dir, config.front.log_level) {
        Ok(Some(path)) => crate::launch::log_start(&config, &path),
        Ok(None) => {}
        Err(e) => eprintln!("flower-tui: {e}; running without a log file"),
    }
    // The sandbox's namespace probe forks a child: beside the rest of the start (after the log
    // opens, which records its answer).
    if config.sandbox.policy.is_on() {
        crate::engine::tools::sandbox::probe_namespaces_early();
    }
    if config.acp {
        let code = runtime.block_on(crate::acp::run(config));
        // A blocking read of stdin may still be parked in the runtime: never wait for it.
        runtime.shutdown_background();
        code
    } else if config.prompt.is_some() {
        runtime.block_on(crate::headless::run(config))
    } else {
        runtime.block_on(crate::tui_main::run(config))
    }
}

/// `-p -` reads the task from stdin (a task too long for the command line); an empty task (`-p ""`,
/// only blanks, or an empty stdin) is refused before anything starts, as the provider would
/// reject an empty message less clearly. Err is the exit code (2).
fn read_task(config: &mut config::Config) -> Result<(), i32> {
    if config.prompt.as_deref() == Some("-") {
        match crate::headless::task_from(std::io::stdin().lock()) {
            Ok(task) => config.prompt = Some(task),
            Err(e) => {
                eprintln!("flower-tui: -p -: {e}");
                return Err(2);
            }
        }
    }
    if config
        .prompt
        .as_deref()
        .is_some_and(|t| t.trim().is_empty())
    {
        eprintln!("flower-tui: -p: the task is empty");
        return Err(2);
    }
    Ok(())
}
