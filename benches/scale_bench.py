#!/usr/bin/env python3
"""Checkpoints at scale: what the safety net costs a one-file headless turn in a large repository.

For each size asked for, a git repository of that many small committed files (in folders of 1,000),
plus an untracked part and an ignored part (`.gitignore`), each a twentieth of the size, is made
under --root (default /tmp/flower-scale) once and reused by later runs. A loopback Anthropic-style
model answers the first request of a turn with one `bash` call appending a line to one committed
file, and the request after it with text. Measured with the release binary, each run a new process:

- `--no-checkpoints`: the turn without the safety net;
- checkpoints, first session: the first run against an empty checkpoint store (a new data dir);
- `/undo` of the turn: `flower-tui --continue -p /undo` after each checkpointed run (a whole
  process: start-up included), checked to put the file back byte for byte.

Wall time is from spawn to exit; peak RSS is /usr/bin/time's (`apt-get install time`), because a
child spawned from Python starts with Python's pages counted in its `ru_maxrss`.

    cargo build --release && python3 benches/scale_bench.py --sizes 10000,100000 [--runs 5]
        [--first 2] [--root /tmp/flower-scale] [--bin target/release/flower-tui]

Nothing runs without --sizes (the 500,000-file repository takes minutes to make): CI never runs it.
"""
import argparse
import http.server
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "..", "target", "release", "flower-tui")
PER_DIR = 1000
TARGET = "d0000/f0000000.txt"
APPEND = f"echo 'one more line' >> {TARGET}"


def sse(name, data):
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def reply(tool_call):
    """A whole Anthropic SSE answer: one `bash` call, or a line of text."""
    out = [sse("message_start", {"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": "claude-bench", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 1}}})]
    if tool_call:
        out += [sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                    "type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}}),
                sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps({"command": APPEND})}})]
        stop = "tool_use"
    else:
        out += [sse("content_block_start", {"type": "content_block_start", "index": 0,
                                            "content_block": {"type": "text", "text": ""}}),
                sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "text_delta", "text": "appended"}})]
        stop = "end_turn"
    out += [sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 5}}),
            sse("message_stop", {"type": "message_stop"})]
    return b"".join(out)


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        last = (body.get("messages") or [{}])[-1].get("content")
        answered = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
        data = reply(tool_call=not answered)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass


def write_files(base, prefix, count):
    for i in range(count):
        d = os.path.join(base, f"{prefix}{i // PER_DIR:04d}")
        if i % PER_DIR == 0:
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i:07d}.txt"), "w") as f:
            f.write(f"file {i}\nsome small content of file {i}\n")


def repository(root, size):
    """The repository of `size` committed files (made once; a stamp says it is complete)."""
    repo = os.path.join(root, f"repo-{size}")
    stamp = repo + ".done"
    if os.path.exists(stamp):
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(repo)
    t0 = time.perf_counter()
    git = lambda *a: subprocess.run(["git", "-C", repo, *a], check=True, stdout=subprocess.DEVNULL)
    git("init", "-q", "-b", "main")
    git("config", "user.email", "bench@example.com")
    git("config", "user.name", "bench")
    git("config", "gc.auto", "0")
    git("config", "maintenance.auto", "false")
    write_files(repo, "d", size)
    with open(os.path.join(repo, ".gitignore"), "w") as f:
        f.write("/build/\n")
    git("add", "-A")
    git("commit", "-q", "-m", "generated")
    # Packed, as a cloned repository is.
    git("gc", "-q")
    write_files(os.path.join(repo, "untracked"), "u", size // 20)
    write_files(os.path.join(repo, "build"), "b", size // 20)
    # The index's stat data fresh, as in a repository someone works in.
    git("status", "--short")
    open(stamp, "w").close()
    print(f"  made {repo} in {time.perf_counter() - t0:.0f} s", flush=True)
    return repo


def run(argv, env):
    """(wall seconds, peak RSS MB, exit code, stdout) of one flower-tui process."""
    out = tempfile.mktemp()
    stdout = tempfile.mktemp()
    t0 = time.perf_counter()
    pid = os.posix_spawn("/usr/bin/time", ["/usr/bin/time", "-o", out, "-f", "%M", BIN, *argv], env,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                                       (os.POSIX_SPAWN_OPEN, 1, stdout, os.O_WRONLY | os.O_CREAT, 0o600),
                                       (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    _, status = os.waitpid(pid, 0)
    wall = time.perf_counter() - t0
    with open(out) as f:
        rss = int(f.read().split()[-1]) / 1024
    with open(stdout) as f:
        text = f.read()
    os.unlink(out)
    os.unlink(stdout)
    return wall, rss, os.waitstatus_to_exitcode(status), text


def check_result(text, what):
    lines = [json.loads(l) for l in text.splitlines() if l.startswith("{")]
    result = [l for l in lines if l.get("type") == "result"]
    if not result or result[-1].get("is_error"):
        sys.exit(f"{what}: no successful result: {text[-600:]}")
    return lines


KEEPERS = []


def store_of(home):
    base = os.path.join(home, "data", "flower", "checkpoints")
    names = os.listdir(base) if os.path.isdir(base) else []
    return os.path.join(base, names[0]) if names else None


TURN_ENDED = [0.0]


def keeper_ready(home, limit=600):
    """Wait until the workspace's feed keeper answers; note how long after the end of the last
    turn, and its peak RSS."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit:
        store = store_of(home)
        if store and os.path.exists(os.path.join(store, "feed.sock")):
            pid = None
            with open(os.path.join(store, "feed.log")) as f:
                for line in f:
                    if " watches " in line:
                        pid = int(line.split("keeper ")[1].split()[0])
            hwm = None
            try:
                with open(f"/proc/{pid}/status") as f:
                    hwm = next(int(l.split()[1]) / 1024 for l in f if l.startswith("VmHWM"))
            except (OSError, StopIteration, TypeError):
                pass
            KEEPERS.append((time.perf_counter() - TURN_ENDED[0], hwm))
            return
        time.sleep(0.05)
    sys.exit("no feed keeper answered")


def stop_keeper(home):
    """Remove the keeper's socket and wait for it to leave (its log says so)."""
    store = store_of(home)
    if not store:
        return
    log = os.path.join(store, "feed.log")
    left = lambda: open(log).read().count(" left: ") if os.path.exists(log) else 0
    before = left()
    try:
        os.unlink(os.path.join(store, "feed.sock"))
    except FileNotFoundError:
        return
    t0 = time.perf_counter()
    while left() == before and time.perf_counter() - t0 < 10:
        time.sleep(0.05)


def measure(repo, size, port, runs, first_runs):
    target = os.path.join(repo, TARGET)
    with open(target, "rb") as f:
        original = f.read()

    def reset():
        with open(target, "wb") as f:
            f.write(original)

    def env_for(home):
        return {"PATH": os.environ.get("PATH", ""), "HOME": home, "XDG_DATA_HOME": home + "/data",
                "XDG_CONFIG_HOME": home + "/cfg", "ANTHROPIC_API_KEY": "sk-bench",
                "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"}

    turn = ["-p", "append a line", "--yes", "--output", "json", "--workspace", repo]
    undo = ["--continue", "-p", "/undo", "--output", "json", "--workspace", repo]
    rows = {"off": [], "first": [], "later": [], "walk": [], "undo": []}
    notices = set()

    def turn_in(home, extra, key):
        wall, rss, code, text = run(turn + extra, env_for(home))
        TURN_ENDED[0] = time.perf_counter()
        if code != 0:
            sys.exit(f"{key} run exited {code}: {text[-600:]}")
        for l in check_result(text, key):
            if l.get("type") in ("warning", "notice"):
                notices.add(str(l.get("message") or l.get("text"))[:160])
        with open(target, "rb") as f:
            if f.read() != original + b"one more line\n":
                sys.exit(f"{key}: the bash call did not append its line to {TARGET}")
        rows[key].append((wall, rss))

    def undo_in(home):
        wall, rss, code, text = run(undo, env_for(home))
        with open(target, "rb") as f:
            restored = f.read() == original
        if code != 0 or not restored:
            rows["undo"].append(None)
            notices.add(f"/undo exited {code}, file restored: {restored}: {text[-300:]}")
            reset()
        else:
            rows["undo"].append((wall, rss))

    for _ in range(runs):
        home = tempfile.mkdtemp(prefix="scale-home-")
        turn_in(home, ["--no-checkpoints"], "off")
        reset()
        shutil.rmtree(home, ignore_errors=True)
    for _ in range(first_runs):
        home = tempfile.mkdtemp(prefix="scale-home-")
        turn_in(home, [], "first")
        undo_in(home)
        keeper_ready(home)
        for _ in range(runs):
            turn_in(home, [], "later")
            undo_in(home)
        # The keeper gone (its socket removed): the next session walks, and starts a new one.
        for _ in range(max(1, runs // 2)):
            stop_keeper(home)
            turn_in(home, [], "walk")
            undo_in(home)
            keeper_ready(home)
        stop_keeper(home)
        shutil.rmtree(home, ignore_errors=True)
    reset()
    return rows, notices


def summary(samples):
    ok = [s for s in samples if s is not None]
    failed = len(samples) - len(ok)
    if not ok:
        return "—", "—", failed
    walls = sorted(w for w, _ in ok)
    rss = [r for _, r in ok]
    wall = f"{statistics.median(walls):.3f} s" if len(walls) > 2 else " / ".join(f"{w:.3f}" for w in walls) + " s"
    wall += f" ({walls[0]:.3f}–{walls[-1]:.3f}, n={len(walls)})"
    return wall, f"{statistics.median(rss):.0f} MB (max {max(rss):.0f})", failed


def main():
    global BIN
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", required=True, help="comma-separated file counts, e.g. 10000,100000,500000")
    ap.add_argument("--runs", type=int, default=5, help="--no-checkpoints runs, and later sessions per first one")
    ap.add_argument("--first", type=int, default=2, help="first sessions (each with a new checkpoint store)")
    ap.add_argument("--root", default="/tmp/flower-scale")
    ap.add_argument("--bin", default=BIN)
    a = ap.parse_args()
    BIN = os.path.abspath(a.bin)
    if not os.path.exists("/usr/bin/time"):
        sys.exit("needs /usr/bin/time (apt-get install time)")
    sizes = [int(s.replace("_", "")) for s in a.sizes.split(",") if s]
    os.makedirs(a.root, exist_ok=True)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, {os.cpu_count()} cores, "
          f"{BIN}", flush=True)
    table = ["| files | | wall | peak RSS |", "| ---: | --- | ---: | ---: |"]
    for size in sizes:
        repo = repository(a.root, size)
        load0 = os.getloadavg()[0]
        rows, notices = measure(repo, size, port, a.runs, a.first)
        load1 = os.getloadavg()[0]
        labels = {"off": "`--no-checkpoints`", "first": "checkpoints, first session",
                  "later": "checkpoints, later sessions (the keeper answers)",
                  "walk": "checkpoints, a later session with no keeper (it walks)",
                  "undo": "`--continue -p /undo` of the turn (a process)"}
        print(f"{size:,} files (load average {load0:.1f} → {load1:.1f}):", flush=True)
        for key, label in labels.items():
            wall, rss, failed = summary(rows[key])
            extra = f", {failed} failed" if failed else ""
            print(f"  {label}: {wall}, peak RSS {rss}{extra}", flush=True)
            table.append(f"| {size:,} | {label}{extra} | {wall} | {rss} |")
        if KEEPERS:
            waits = sorted(k[0] for k in KEEPERS)
            hwms = [k[1] for k in KEEPERS if k[1] is not None]
            print(f"  feed keeper: answering {statistics.median(waits):.2f} s after the end of the turn "
                  f"that started it (max {waits[-1]:.2f}; the /undo run between), its own peak RSS "
                  f"{max(hwms) if hwms else float('nan'):.0f} MB", flush=True)
            KEEPERS.clear()
        for n in sorted(notices):
            print(f"  said: {n}", flush=True)
    print("\n".join(table))


if __name__ == "__main__":
    main()
