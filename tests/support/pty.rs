//! The real binary in a pseudo-terminal (120×40), its output parsed by a vt100 screen, keys
//! written as bytes, the model played by the loopback fake. Every wait polls the parsed screen (or
//! the fake's request log) every 50 ms and fails with the screen after 20 s.

use std::io::{Read, Write};
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, ExitStatus, MasterPty, PtySize, native_pty_system};
use serde_json::Value;
use tempfile::TempDir;

use super::fake::FakeServer;
use super::harness::KEY;

pub use super::requests::last_user_text;

pub const ROWS: u16 = 40;
pub const COLS: u16 = 120;
pub const POLL: Duration = Duration::from_millis(50);
pub const TIMEOUT: Duration = Duration::from_secs(20);

pub const ENTER: &str = "\r";
pub const ESC: &str = "\x1b";
pub const CTRL_C: &str = "\x03";
pub const CTRL_S: &str = "\x13";
pub const DOWN: &str = "\x1b[B";
pub const END: &str = "\x1b[F";

/// The input box's placeholder: the first frame has been drawn and keys are read.
pub const READY: &str = "Ask anything";

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

pub fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// A writer on the master side that only writes what it is given. Not portable-pty's
/// `take_writer`: dropping that one types a newline and the terminal's EOF character (Ctrl-D)
/// into the terminal, for a program reading a cooked line. The program here reads in raw mode,
/// so those arrive as the keys Ctrl-J and Ctrl-D (in the side editor Ctrl-J deletes back to the
/// start of the line): a test that closes the terminal would have typed into it on the way.
fn plain_writer(master: &dyn MasterPty) -> std::fs::File {
    let fd = master.as_raw_fd().expect("a unix pty has a descriptor");
    // SAFETY: `fd` is the master's open descriptor, borrowed only to duplicate it; the master
    // outlives this call.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    std::fs::File::from(borrowed.try_clone_to_owned().unwrap())
}

/// What the reader thread shares with the test.
pub struct Shared {
    pub parser: Mutex<vt100::Parser>,
    /// Every byte the program wrote, in order.
    pub raw: Mutex<Vec<u8>>,
    /// The reader saw end of file (the program and its terminal are gone).
    pub eof: AtomicBool,
    /// The test hangs up: the reader lets go of the terminal at its next read.
    pub hang_up: AtomicBool,
}

/// The real binary running in a pseudo-terminal. Dropping it kills the program if it still runs.
pub struct Pty {
    pub child: Box<dyn Child + Send + Sync>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    pub shared: Arc<Shared>,
    reader: Option<JoinHandle<()>>,
    /// None once the test hung up ([`Pty::hang_up`]).
    master: Option<Box<dyn MasterPty + Send>>,
    /// HOME, data and config dirs, and the workspace `ws`.
    home: Arc<TempDir>,
}

impl Drop for Pty {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Pty {
    /// Start `flower-tui ARGS --workspace <home>/ws` against the fake server, in an isolated env.
    pub fn start(server: &FakeServer, args: &[&str]) -> Pty {
        Pty::start_in(Arc::new(tempfile::tempdir().unwrap()), server, args)
    }

    /// [`Pty::start`], once the first frame is drawn and keys are read ([`READY`]).
    pub fn open(server: &FakeServer, args: &[&str]) -> Pty {
        let mut t = Pty::start(server, args);
        t.wait_for(READY);
        t
    }

    /// [`Pty::start`] in a given home (a second run in the same workspace, data and config dirs).
    pub fn start_in(home: Arc<TempDir>, server: &FakeServer, args: &[&str]) -> Pty {
        Pty::start_wrapped(home, server, &[], args)
    }

    /// [`Pty::start_in`] through `wrapper`, a command that runs the binary in its own place
    /// (`env --block-signal=HUP` runs it with SIGHUP blocked; the pid stays the binary's).
    pub fn start_wrapped(
        home: Arc<TempDir>,
        server: &FakeServer,
        wrapper: &[&str],
        args: &[&str],
    ) -> Pty {
        let ws = home.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let bin = env!("CARGO_BIN_EXE_flower-tui");
        let mut cmd = match wrapper.split_first() {
            Some((program, wrapper_args)) => {
                let mut cmd = CommandBuilder::new(program);
                cmd.args(wrapper_args);
                cmd.arg(bin);
                cmd
            }
            None => CommandBuilder::new(bin),
        };
        cmd.env_clear();
        cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
        cmd.env("TERM", "xterm-256color");
        cmd.env("HOME", home.path());
        cmd.env("XDG_DATA_HOME", home.path().join("data"));
        cmd.env("XDG_CONFIG_HOME", home.path().join("config"));
        cmd.env("ANTHROPIC_API_KEY", KEY);
        cmd.env("ANTHROPIC_BASE_URL", server.base_url());
        cmd.cwd(home.path());
        cmd.args(args);
        cmd.arg("--workspace");
        cmd.arg(&ws);
        let child = pair.slave.spawn_command(cmd).unwrap();
        // Only the child may hold the slave: the reader sees EOF once the child is gone.
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer: Arc<Mutex<Box<dyn Write + Send>>> =
            Arc::new(Mutex::new(Box::new(plain_writer(pair.master.as_ref()))));
        let shared = Arc::new(Shared {
            parser: Mutex::new(vt100::Parser::new(ROWS, COLS, 0)),
            raw: Mutex::new(Vec::new()),
            eof: AtomicBool::new(false),
            hang_up: AtomicBool::new(false),
        });
        let thread_shared = shared.clone();
        let answer = writer.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            let mut answered = false;
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if thread_shared.hang_up.load(Ordering::SeqCst) => break,
                    Ok(n) => {
                        lock(&thread_shared.parser).process(&buf[..n]);
                        let mut raw = lock(&thread_shared.raw);
                        raw.extend_from_slice(&buf[..n]);
                        // Answer the primary device attributes query (crossterm asks it to learn
                        // whether the keyboard protocol is supported) as a terminal would, so the
                        // program does not wait for its timeout. vt100 does not answer queries.
                        if !answered && find(&raw, b"\x1b[c").is_some() {
                            answered = true;
                            let mut w = lock(&answer);
                            let _ = w.write_all(b"\x1b[?62;22c");
                            let _ = w.flush();
                        }
                    }
                }
            }
            thread_shared.eof.store(true, Ordering::SeqCst);
        });
        Pty {
            child,
            writer,
            shared,
            reader: Some(reader),
            master: Some(pair.master),
            home,
        }
    }

    pub fn workspace(&self) -> PathBuf {
        self.home.path().join("ws")
    }

    /// The home this run uses (for [`Pty::start_in`]).
    pub fn home(&self) -> Arc<TempDir> {
        self.home.clone()
    }

    /// The program's pid (for signals).
    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("a running child has a pid")
    }

    /// Type bytes into the terminal.
    pub fn keys(&self, s: &str) {
        let mut w = lock(&self.writer);
        w.write_all(s.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Resize the terminal (the program gets SIGWINCH) and the parsed screen with it.
    pub fn resize(&self, rows: u16, cols: u16) {
        lock(&self.shared.parser).screen_mut().set_size(rows, cols);
        self.master
            .as_ref()
            .expect("the terminal is open")
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
    }

    /// Close the terminal, as a closed terminal window or `tmux kill-session` does: every
    /// descriptor of the master side goes, so the kernel sends the program SIGHUP and its writes
    /// to the terminal fail from then on. `poke` is typed first so that the program draws and the
    /// reader, woken by that, lets go of its descriptor.
    pub fn hang_up(&mut self, poke: &str) {
        self.shared.hang_up.store(true, Ordering::SeqCst);
        self.keys(poke);
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        *lock(&self.writer) = Box::new(std::io::sink());
        self.master = None;
        self.shared.eof.store(true, Ordering::SeqCst);
    }

    pub fn screen(&self) -> String {
        lock(&self.shared.parser).screen().contents()
    }

    pub fn raw(&self) -> Vec<u8> {
        lock(&self.shared.raw).clone()
    }

    /// Poll until `ok` holds for the screen; panic with the screen after the timeout, or at once
    /// if the program exited. The screen returned is the one after the frame that made `ok` hold
    /// was written out whole (a frame can reach the terminal in several writes): the output has
    /// paused, and `ok` still holds; else the screen that first matched.
    pub fn wait(&mut self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let screen = self.screen();
            if ok(&screen) {
                let settled = self.settled();
                return if ok(&settled) { settled } else { screen };
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("the program exited ({status}) while waiting for {what}; screen:\n{screen}");
            }
            if Instant::now() >= deadline {
                panic!("timed out waiting for {what}; screen:\n{screen}");
            }
            std::thread::sleep(POLL);
        }
    }

    /// The screen once no byte has come for a moment (at most 0.3 s of waiting).
    fn settled(&self) -> String {
        let quiet = Duration::from_millis(25);
        let give_up = Instant::now() + Duration::from_millis(300);
        let mut seen = lock(&self.shared.raw).len();
        let mut since = Instant::now();
        while Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(10));
            let now = lock(&self.shared.raw).len();
            if now != seen {
                (seen, since) = (now, Instant::now());
            } else if since.elapsed() >= quiet {
                break;
            }
        }
        self.screen()
    }

    /// Poll until `text` is on the screen.
    pub fn wait_for(&mut self, text: &str) -> String {
        self.wait(&format!("{text:?}"), |s| s.contains(text))
    }

    /// Type `text`, wait until the input box shows it, and send it with Enter.
    pub fn ask(&mut self, text: &str) {
        self.keys(text);
        self.wait_for(text);
        self.keys(ENTER);
    }

    /// Quit with Ctrl-C twice (from an idle, empty input) and wait until the program is gone;
    /// its exit status.
    pub fn quit(&mut self) -> ExitStatus {
        self.keys(CTRL_C);
        self.keys(CTRL_C);
        self.wait_exit()
    }

    /// In the side editor: go to the document's last line and open a new line below it.
    pub fn new_line_at_end(&self) {
        self.keys(&DOWN.repeat(40));
        self.keys(END);
        self.keys(ENTER);
    }

    /// Send `signal` (`-KILL`, `-TERM`, …) to the program with `kill`.
    pub fn signal(&self, signal: &str) {
        let sent = std::process::Command::new("kill")
            .args([signal, &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill {signal}");
    }

    /// `kill -9` the program and wait until it is gone; its exit status.
    pub fn kill_9(&mut self) -> ExitStatus {
        self.signal("-KILL");
        self.wait_exit()
    }

    /// Poll until the fake has recorded `n` requests; they are returned.
    pub fn wait_requests(&mut self, server: &FakeServer, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let reqs = server.requests();
            if reqs.len() >= n {
                return reqs;
            }
            if Instant::now() >= deadline {
                panic!(
                    "timed out waiting for request {n} (got {}); screen:\n{}",
                    reqs.len(),
                    self.screen()
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Poll until the program exits and its output is drained; its exit status.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() >= deadline {
                panic!("the program did not exit; screen:\n{}", self.screen());
            }
            std::thread::sleep(POLL);
        };
        while !self.shared.eof.load(Ordering::SeqCst) {
            if Instant::now() >= deadline {
                panic!("the terminal output did not end after the program exited");
            }
            std::thread::sleep(POLL);
        }
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        status
    }
}

/// A runtime, and a fake server running on it (the pseudo-terminal tests themselves are
/// synchronous). Keep the runtime as long as the server.
pub fn served() -> (tokio::runtime::Runtime, FakeServer) {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    (rt, server)
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The unsaved-edits files (`<name>.unsaved-<time>.md`) the TUI kept beside `file`.
pub fn kept_beside(file: &Path) -> Vec<PathBuf> {
    let prefix = format!("{}.unsaved-", file.file_name().unwrap().to_string_lossy());
    std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .collect()
}
