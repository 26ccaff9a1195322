#!/usr/bin/env python3
"""TUI performance of the real release binary in a 200x50 pseudo-terminal.

Measures, each in fresh processes with HOME/XDG dirs/TMPDIR isolated in a temp dir:
  1. first frame: spawn to the first output containing the drawn status line (`DEMO`, run with
     `--demo`), median of 10 launches;
  2. keystroke-to-frame latency while ~2,000 tokens/s stream in from a loopback Anthropic-style
     SSE server, then while the bash command that reply calls prints ~5,000 lines/s into its live
     cell: p50/p99 per phase and together, single printable keystrokes typed ~100 ms apart;
  3. idle CPU over 10 s (and bytes drawn, context switches) and idle RSS (a provider that is
     never asked: the demo plays by itself, which is not idle);
  4. `@` completion over a 100,000-file tree, through the UI: `@<query>` written to the frame
     listing the file (read off a small screen model), p50/p99 over 30 queries once the index
     is complete.

The reader acts as a terminal: it answers the primary device attributes query (ESC [ c) with
ESC [ ? 62 ; c and a cursor position query (ESC [ 6 n) with ESC [ 1 ; 1 R.

Usage: cargo build --release && python3 benches/tui_bench.py
Options: --launches N (first-frame launches, default 10), --keys N (keystrokes at most, default
200), --idle S (idle seconds, default 10), --mentions N (@ queries, default 30), --bin PATH.
"""
import fcntl, http.server, json, os, pty, re, select, shutil, signal, statistics, struct, sys
import tempfile, termios, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "..", "target", "release", "flower-tui")
ROWS, COLS = 50, 200
DA1_QUERY, DA1_REPLY = b"\x1b[c", b"\x1b[?62;c"
CPR_QUERY, CPR_REPLY = b"\x1b[6n", b"\x1b[1;1R"
TOKENS_PER_SEC = 2000
STREAM_SECS = 8.0
KEY_INTERVAL = 0.100
KEY_TIMEOUT = 3.0
OVERALL_TIMEOUT = 420  # seconds: the whole bench is aborted (and the child killed) after this
CLK_TCK = os.sysconf("SC_CLK_TCK")


class BenchError(Exception):
    pass


# ---------------------------------------------------------------- the child in a pseudo-terminal

class Screen:
    """Just enough of a terminal to read what is on screen: absolute cursor moves (CSI row;col H,
    which is how the TUI addresses every run of changed cells), CR/LF, and printable characters;
    every other escape sequence is skipped. The popup highlights the matched characters and
    leaves cells that did not change, so the bytes of a path are not contiguous in the output."""

    CSI = re.compile(rb"\x1b\[([0-9;?]*)([@-~])|\x1b[^\[]")

    def __init__(self, rows, cols):
        self.rows, self.cols = rows, cols
        self.grid = [[" "] * cols for _ in range(rows)]
        self.r = self.c = 0
        self.pending = b""

    def feed(self, data):
        data = self.pending + data
        # Keep an incomplete escape sequence or UTF-8 character for the next read.
        cut = data.rfind(b"\x1b")
        if cut >= 0 and not self.CSI.match(data, cut):
            data, self.pending = data[:cut], data[cut:]
        else:
            self.pending = b""
        i = 0
        while i < len(data):
            m = self.CSI.match(data, i) if data[i] == 0x1b else None
            if m:
                if m.group(2) == b"H":
                    parts = (m.group(1) or b"1;1").split(b";")
                    self.r = max(0, int(parts[0] or 1) - 1)
                    self.c = max(0, int(parts[1] or 1) - 1) if len(parts) > 1 else 0
                i = m.end()
                continue
            j = i
            while j < len(data) and data[j] != 0x1b:
                j += 1
            for ch in data[i:j].decode("utf-8", "replace"):
                if ch == "\r":
                    self.c = 0
                elif ch == "\n":
                    self.r = min(self.rows - 1, self.r + 1)
                elif ch >= " ":
                    if self.r < self.rows and self.c < self.cols:
                        self.grid[self.r][self.c] = ch
                    self.c += 1
            i = j

    def contains(self, text):
        return any(text in "".join(row) for row in self.grid)

    def find(self, pattern):
        for row in self.grid:
            m = re.search(pattern, "".join(row))
            if m:
                return m
        return None


class Child:
    """The binary on the slave side of a pty; this object is the terminal on the master side."""

    def __init__(self, args, env):
        self.t_spawn = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: size the terminal before anything can ask for it, then exec
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
                os.execve(BIN, [BIN] + args, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.carry = b""  # the tail of the last read, in case a query was split across reads
        self.status = None
        self.total = 0

    def _answer(self, data):
        buf = self.carry + data
        end = 0
        for query, reply in ((DA1_QUERY, DA1_REPLY), (CPR_QUERY, CPR_REPLY)):
            start = 0
            while (i := buf.find(query, start)) >= 0:
                os.write(self.fd, reply)
                start = i + len(query)
                end = max(end, start)
        self.carry = buf[max(end, len(buf) - 3):]

    def read(self, timeout):
        """One read of whatever is available within `timeout` s: (bytes, time of the read).
        b"" on timeout; raises BenchError when the child has closed the terminal."""
        r, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not r:
            return b"", time.perf_counter()
        try:
            data = os.read(self.fd, 1 << 16)
        except OSError:  # EIO: the slave side is closed
            data = b""
        now = time.perf_counter()
        if not data:
            raise BenchError(f"the TUI closed the terminal (exit status {self.reap(0.5)})")
        self.total += len(data)
        self._answer(data)
        return data, now

    def read_until(self, needle, timeout, what):
        """Read until `needle` is in the output read by this call; the time of that read."""
        deadline = time.perf_counter() + timeout
        seen = b""
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                tail = seen[-300:].decode("utf-8", "replace")
                raise BenchError(f"timed out after {timeout:.0f} s waiting for {what}; last output: {tail!r}")
            data, t = self.read(left)
            seen = seen[-len(needle):] + data
            if needle in seen:
                return t

    def drain(self, secs):
        """Keep reading (and answering queries) for `secs` s; the number of bytes read."""
        deadline = time.perf_counter() + secs
        n = 0
        while (left := deadline - time.perf_counter()) > 0:
            data, _ = self.read(left)
            n += len(data)
        return n

    def send(self, data):
        os.write(self.fd, data)

    def alive(self):
        if self.status is not None:
            return False
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid == 0:
            return True
        self.status = status
        return False

    def reap(self, timeout):
        """Wait up to `timeout` s for the child to exit (draining its output); its wait status."""
        deadline = time.perf_counter() + timeout
        while self.alive() and time.perf_counter() < deadline:
            try:
                r, _, _ = select.select([self.fd], [], [], 0.02)
                if r:
                    os.read(self.fd, 1 << 16)
            except OSError:
                time.sleep(0.02)
        return self.status

    def quit(self):
        """Ctrl-C until it quits, at most four (a running turn takes the first: the demo plays
        by itself; one may clear the input; then one arms the quit and, within 1 s, the next one
        quits), then SIGTERM, then SIGKILL. True when the Ctrl-Cs alone were enough."""
        graceful = False
        try:
            for _ in range(4):
                if not self.alive():
                    break
                self.send(b"\x03")
                graceful = self.reap(0.2) is not None
            if not graceful and self.alive():
                graceful = self.reap(3.0) is not None
        except OSError:
            pass
        self.kill()
        return graceful

    def kill(self):
        for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
            if not self.alive():
                break
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                break
            self.reap(wait)
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None

    def cpu_ticks(self):
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime (fields 14 and 15)

    def status_field(self, name):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split(":", 1)[1].strip()
        return None

    def ctx_switches(self):
        """Voluntary + involuntary context switches summed over all the process's threads."""
        total = 0
        for tid in os.listdir(f"/proc/{self.pid}/task"):
            try:
                with open(f"/proc/{self.pid}/task/{tid}/status") as f:
                    for line in f:
                        if "ctxt_switches" in line:
                            total += int(line.split(":")[1])
            except OSError:
                pass
        return total


# ---------------------------------------------------------------- the loopback Anthropic server

WORDS = ("the", "cat", "sat", "on", "a", "mat", "and", "then", "it", "ran", "far", "away", "into",
         "deep", "green", "woods", "where", "old", "trees", "grow", "tall", "near", "cold", "river")


def sse_event(name, data):
    payload = f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
    return b"%x\r\n%s\r\n" % (len(payload), payload)  # one HTTP/1.1 chunk per event


def make_deltas():
    """~4-character lowercase text deltas (the typed keys are uppercase: they never collide)."""
    out = []
    for i in range(97):
        w = WORDS[i % len(WORDS)]
        text = (" " + w)[:5] if i % 29 else "\n\n" + w[:2]
        out.append(sse_event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                      "delta": {"type": "text_delta", "text": text}}))
    return out


class Server:
    """Answers the first POST /v1/messages with one long streamed text reply (followed, with
    `tool`, by a bash tool call running that command), every later one with a short reply."""

    def __init__(self, rate, secs, tool=None):
        self.rate, self.secs, self.tool = rate, secs, tool
        self.first_done = threading.Event()
        self.started = threading.Event()
        self.done = threading.Event()
        self.stop = threading.Event()
        self.sent = 0
        self.elapsed = 0.0
        self.requests = 0
        self.deltas = make_deltas()
        srv = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length", 0)))
                srv.requests += 1
                if not self.path.startswith("/v1/messages"):
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("transfer-encoding", "chunked")
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    srv.stream(self.wfile)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    srv.done.set()
                self.close_connection = True

            def do_GET(self):
                self.send_error(404)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stream(self, w):
        first = not self.started.is_set()
        w.write(sse_event("message_start", {"type": "message_start", "message": {
            "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench",
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1200, "output_tokens": 1}}}))
        w.write(sse_event("content_block_start", {"type": "content_block_start", "index": 0,
                                                  "content_block": {"type": "text", "text": ""}}))
        total = int(self.rate * self.secs) if first else 8
        t0 = time.perf_counter()
        if first:
            self.started.set()
        i = 0
        while i < total and not self.stop.is_set():
            due = int((time.perf_counter() - t0) * self.rate) + 1  # events due by now
            while i < min(due, total):
                w.write(self.deltas[i % len(self.deltas)])  # unbuffered: one send per event
                i += 1
            time.sleep(max(0.0, t0 + i / self.rate - time.perf_counter()))
        if first:
            self.sent, self.elapsed = i, time.perf_counter() - t0
        w.write(sse_event("content_block_stop", {"type": "content_block_stop", "index": 0}))
        stop = "end_turn"
        if first and self.tool:
            stop = "tool_use"
            w.write(sse_event("content_block_start", {"type": "content_block_start", "index": 1,
                                                      "content_block": {"type": "tool_use", "id": "toolu_bench",
                                                                        "name": "bash", "input": {}}}))
            w.write(sse_event("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps({"command": self.tool})}}))
            w.write(sse_event("content_block_stop", {"type": "content_block_stop", "index": 1}))
        w.write(sse_event("message_delta", {"type": "message_delta",
                                            "delta": {"stop_reason": stop, "stop_sequence": None},
                                            "usage": {"output_tokens": i}}))
        w.write(sse_event("message_stop", {"type": "message_stop"}))
        w.write(b"0\r\n\r\n")
        if first:
            self.first_done.set()

    def close(self):
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


# ---------------------------------------------------------------- the three measurements

def base_env(root):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm-256color",
           "LANG": "C.UTF-8", "HOME": root, "XDG_DATA_HOME": os.path.join(root, "data"),
           "XDG_CONFIG_HOME": os.path.join(root, "config"), "XDG_CACHE_HOME": os.path.join(root, "cache"),
           "TMPDIR": os.path.join(root, "tmp"), "COLUMNS": str(COLS), "LINES": str(ROWS)}
    for d in ("data", "config", "cache", "tmp", "ws"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    return env


def first_frame(root, children, launches):
    env = base_env(root)
    times, first_bytes, graceful = [], [], 0
    for _ in range(launches):
        c = Child(["--demo", "--workspace", os.path.join(root, "ws")], env)
        children.append(c)
        try:
            data, t = c.read(10.0)
            if not data:
                raise BenchError("no output at all within 10 s of the launch")
            first_bytes.append((t - c.t_spawn) * 1000)
            if b"DEMO" in data:
                t_frame = t
            else:
                t_frame = c.read_until(b"DEMO", 10.0, "the status line (DEMO)")
            times.append((t_frame - c.t_spawn) * 1000)
        finally:
            graceful += c.quit()
    print(f"1. first frame (spawn -> status line drawn): median {statistics.median(times):.1f} ms "
          f"(min {min(times):.1f}, max {max(times):.1f}, n={len(times)}); "
          f"first byte of output: median {statistics.median(first_bytes):.1f} ms; "
          f"quit by Ctrl-C alone: {graceful}/{launches}", flush=True)
    return statistics.median(times)


BASH_SECS = 8.0
# A command printing ~5,000 lines/s for BASH_SECS (lowercase and digits only, like the stream).
BASH_COMMAND = ("python3 -u -c 'import time\nt = time.time()\ni = 0\n"
                "while time.time() - t < %.1f:\n"
                "    for _ in range(50):\n"
                "        print(\"test case_%%d ... ok\" %% i)\n"
                "        i += 1\n"
                "    time.sleep(0.01)'" % BASH_SECS)


def keystroke_latency(root, children, keys):
    """Keystrokes typed ~100 ms apart through one turn: a 2,000 tokens/s streamed reply, then the
    bash command it calls printing ~5,000 lines/s into its live cell. The engine runs a tool after
    the reply that called it, so the two phases follow each other in one process."""
    srv = Server(TOKENS_PER_SEC, STREAM_SECS, tool=BASH_COMMAND)
    try:
        env = base_env(root)
        env.update({"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{srv.port}"})
        c = Child(["--yes", "--workspace", os.path.join(root, "ws")], env)
        children.append(c)
        c.read_until(b"Ask anything", 15.0, "the input box placeholder")
        c.drain(0.3)
        c.send(b"write me a long story")
        c.drain(0.2)
        c.send(b"\r")
        deadline = time.perf_counter() + 15.0
        while not srv.started.is_set():
            if time.perf_counter() > deadline:
                raise BenchError("the TUI sent no request to the loopback server within 15 s")
            c.drain(0.02)
        # Calibrate: any uppercase letter already seen in the streaming output (escape sequences
        # included: CSI ... H, K, J) cannot be told apart from a keystroke's echo; leave it out.
        seen = bytearray()
        t_cal = time.perf_counter() + 0.6
        while (left := t_cal - time.perf_counter()) > 0:
            data, _ = c.read(left)
            seen += data
        alphabet = [ch for ch in b"QXZVWJYUGFRNTPBSLOIEDAMK" if ch not in seen]
        if len(alphabet) < 4:
            raise BenchError(f"too few distinguishable keys (output used {sorted(set(seen))[:40]})")
        cpu0, tc0, bytes0 = c.cpu_ticks(), time.perf_counter(), c.total
        lat = {"stream": [], "bash": []}
        missed = 0
        for i in range(keys):
            if srv.requests >= 2:  # the command ended: its result went to the model
                break
            phase = "bash" if srv.first_done.is_set() else "stream"
            ch = bytes([alphabet[i % len(alphabet)]])
            t_w = time.perf_counter()
            c.send(ch)
            end = t_w + KEY_TIMEOUT
            got = None
            while (left := end - time.perf_counter()) > 0:
                data, t = c.read(left)
                if ch in data:
                    got = t
                    break
            if got is None:
                missed += 1
            else:
                lat[phase].append((got - t_w) * 1000)
            c.drain(max(0.0, t_w + KEY_INTERVAL - time.perf_counter()))
        cpu1, tc1, bytes1 = c.cpu_ticks(), time.perf_counter(), c.total
        end = time.perf_counter() + STREAM_SECS + BASH_SECS + 10
        while srv.requests < 2 and time.perf_counter() < end:
            c.drain(0.1)
        c.drain(0.5)
        ok = c.alive()
    finally:
        srv.close()
    both = lat["stream"] + lat["bash"]
    if len(lat["stream"]) < 2 or len(lat["bash"]) < 2:
        raise BenchError(f"too few keystrokes seen on screen (stream {len(lat['stream'])}, "
                         f"bash {len(lat['bash'])}, {missed} missed)")
    rate = srv.sent / srv.elapsed if srv.elapsed else 0.0
    secs = tc1 - tc0

    def pq(xs):
        q = statistics.quantiles(xs, n=100, method="inclusive")
        return q[49], q[98]
    s50, s99 = pq(lat["stream"])
    b50, b99 = pq(lat["bash"])
    a50, a99 = pq(both)
    print(f"2. keystroke -> frame while streaming {rate:,.0f} tokens/s: p50 {s50:.1f} ms, p99 {s99:.1f} ms "
          f"(n={len(lat['stream'])}); while the bash cell takes ~5,000 lines/s: p50 {b50:.1f} ms, "
          f"p99 {b99:.1f} ms (n={len(lat['bash'])}); both: p50 {a50:.1f} ms, p99 {a99:.1f} ms "
          f"(max {max(both):.1f}, missed {missed})", flush=True)
    print(f"   during the typing: TUI CPU {(cpu1 - cpu0) / CLK_TCK / secs * 100:.0f}% of one core, "
          f"terminal output {(bytes1 - bytes0) / secs / 1024:.0f} KiB/s; streamed {srv.sent} deltas "
          f"in {srv.elapsed:.2f} s; TUI alive after the turn: {ok}", flush=True)
    if len(both) < 50:
        print(f"   WARNING: fewer than 50 keystrokes measured ({len(both)})", flush=True)
    c.quit()
    return a50, a99


MENTION_DIRS, MENTION_FILES = 1000, 100  # 100,000 files


def mention_latency(root, children, trials):
    """`@` completion through the UI over a 100,000-file tree: from the write of `@<query>` to the
    frame that lists the file it names (the index walked in the background since the first
    frame)."""
    ws = os.path.join(root, "mention-ws")
    t0 = time.perf_counter()
    for i in range(MENTION_DIRS):
        d = os.path.join(ws, f"d{i}")
        os.makedirs(d, exist_ok=True)
        for j in range(MENTION_FILES):
            open(os.path.join(d, f"f{i}_{j}.rs"), "w").close()
    made = time.perf_counter() - t0
    env = base_env(root)
    # A provider that is never asked (the demo would work in its own scratch copy, not `ws`).
    env.update({"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    c = Child(["--workspace", ws], env)
    children.append(c)
    try:
        t_spawn = c.t_spawn
        c.read_until(b"Ask anything", 15.0, "the input box placeholder")
        # The first answers may come from a partial index; wait until the walk is done (the
        # popup's title says how many paths are indexed).
        screen = Screen(ROWS, COLS)
        deadline = time.perf_counter() + 60.0
        while True:
            c.send(b"@")
            t_poll = time.perf_counter() + 0.3
            while (left := t_poll - time.perf_counter()) > 0:
                data, _ = c.read(left)
                screen.feed(data)
            done = screen.find(r"files · (\d+) indexed")
            c.send(b"\x7f")
            t_poll = time.perf_counter() + 0.2
            while (left := t_poll - time.perf_counter()) > 0:
                data, _ = c.read(left)
                screen.feed(data)
            if done and int(done.group(1)) >= MENTION_DIRS * MENTION_FILES:
                indexed = int(done.group(1))
                walked = time.perf_counter() - t_spawn
                break
            if time.perf_counter() > deadline:
                raise BenchError("the index did not complete within 60 s")
        lat = []
        for k in range(trials):
            i, j = (k * 389) % MENTION_DIRS, (k * 37) % MENTION_FILES
            query = f"f{i}_{j}".encode()
            target = f"d{i}/f{i}_{j}.rs"
            t_w = time.perf_counter()
            c.send(b"@" + query)
            t_end = t_w + 5.0
            while not screen.contains(target):
                if (left := t_end - time.perf_counter()) <= 0:
                    raise BenchError(f"the popup never listed {target}")
                data, t = c.read(left)
                screen.feed(data)
            lat.append((t - t_w) * 1000)
            c.send(b"\x7f" * (len(query) + 1))
            t_poll = time.perf_counter() + 0.3
            while (left := t_poll - time.perf_counter()) > 0:
                data, _ = c.read(left)
                screen.feed(data)
            if screen.contains(target):
                raise BenchError(f"{target} still on screen after the popup closed")
    finally:
        c.quit()
    q = statistics.quantiles(lat, n=100, method="inclusive")
    print(f"4. @ completion over {MENTION_DIRS * MENTION_FILES:,} files (UI path, keys to the frame "
          f"listing the match): p50 {q[49]:.1f} ms, p99 {q[98]:.1f} ms (min {min(lat):.1f}, "
          f"max {max(lat):.1f}, n={len(lat)}); index of {indexed:,} paths complete {walked:.1f} s after launch; "
          f"tree made in {made:.1f} s", flush=True)
    return q[49], q[98]


def idle(root, children, secs):
    env = base_env(root)
    # A provider that is never asked: the demo now plays by itself, which is not idle.
    env.update({"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    c = Child(["--workspace", os.path.join(root, "ws")], env)
    children.append(c)
    c.read_until(b"Ask anything", 10.0, "the input box placeholder")
    c.drain(2.0)
    cpu0, sw0, t0 = c.cpu_ticks(), c.ctx_switches(), time.perf_counter()
    drawn = c.drain(secs)
    cpu1, sw1, t1 = c.cpu_ticks(), c.ctx_switches(), time.perf_counter()
    rss = c.status_field("VmRSS")
    hwm = c.status_field("VmHWM")
    threads = c.status_field("Threads")
    c.quit()
    cpu = (cpu1 - cpu0) / CLK_TCK
    print(f"3. idle over {t1 - t0:.1f} s: CPU {cpu:.2f} s = {cpu / (t1 - t0) * 100:.2f}% of one core "
          f"(resolution {100 / CLK_TCK / (t1 - t0):.2f}%), {drawn} bytes drawn, "
          f"{(sw1 - sw0) / (t1 - t0):.1f} context switches/s over {threads} threads", flush=True)
    print(f"   idle RSS: {rss} (peak {hwm})", flush=True)
    return cpu / (t1 - t0) * 100, rss


def main():
    global BIN
    args = sys.argv[1:]
    opts = {"--launches": 10, "--keys": 200, "--idle": 10, "--mentions": 30}
    while args:
        a = args.pop(0)
        if a == "--bin" and args:
            BIN = args.pop(0)
        elif a in opts and args:
            opts[a] = type(opts[a])(args.pop(0))
        else:
            sys.exit(__doc__)
    BIN = os.path.abspath(BIN)
    if not os.access(BIN, os.X_OK):
        sys.exit(f"no binary at {BIN}: run `cargo build --release` first")
    sys.setswitchinterval(0.0005)  # the server thread must not hold up the reader's timestamps

    def on_alarm(*_):
        raise BenchError(f"the whole bench took over {OVERALL_TIMEOUT} s")
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(OVERALL_TIMEOUT)
    root = tempfile.mkdtemp(prefix="tui-bench-")
    children = []
    try:
        print(f"flower-tui TUI bench: {BIN}, {COLS}x{ROWS} pty, load average {os.getloadavg()[0]:.2f}",
              flush=True)
        ff = first_frame(root, children, opts["--launches"])
        p50, p99 = keystroke_latency(root, children, opts["--keys"])
        cpu, rss = idle(root, children, opts["--idle"])
        m50, m99 = mention_latency(root, children, opts["--mentions"])
        print(f"summary: first frame {ff:.1f} ms | keystroke->frame under {TOKENS_PER_SEC} tok/s "
              f"then a live bash cell p50 {p50:.1f} ms, p99 {p99:.1f} ms | idle CPU {cpu:.2f}% of a "
              f"core | idle RSS {rss} | @ over 100,000 files p50 {m50:.1f} ms, p99 {m99:.1f} ms "
              f"| load average {os.getloadavg()[0]:.2f}", flush=True)
    except BenchError as e:
        print(f"tui_bench: {e}", file=sys.stderr)
        sys.exit(1)
    finally:
        signal.alarm(0)
        for c in children:
            c.kill()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
