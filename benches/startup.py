#!/usr/bin/env python3
"""Headless start-to-first-request latency, the whole trivial turn (start to exit) and peak RSS of
a one-turn run, against a loopback Anthropic-style SSE server, in a folder that is no repository
and in a small git repository (200 committed files, one changed, one untracked).
Usage: cargo build --release && python3 benches/startup.py [runs]
(needs /usr/bin/time for the RSS figure: `apt-get install time`)."""
import http.server, json, os, statistics, subprocess, sys, tempfile, threading, time

BIN = os.path.join(os.path.dirname(__file__), "..", "target", "release", "flower-tui")
first_request_at = []

def sse(text):
    ev = [("message_start", {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "x", "content": [], "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
          ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
          ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
          ("content_block_stop", {"type": "content_block_stop", "index": 0}),
          ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
          ("message_stop", {"type": "message_stop"})]
    return "".join(f"event: {n}\ndata: {json.dumps(d)}\n\n" for n, d in ev).encode()

class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        first_request_at.append(time.perf_counter())
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = sse("hi")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass

def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    home = tempfile.mkdtemp()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "XDG_DATA_HOME": home + "/data",
           "XDG_CONFIG_HOME": home + "/cfg", "ANTHROPIC_API_KEY": "sk-bench",
           "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{srv.server_address[1]}"}
    repo = os.path.join(home, "repo")
    os.makedirs(repo)
    git = lambda *a: subprocess.run(["git", "-C", repo, *a], check=True, stdout=subprocess.DEVNULL)
    git("init", "-q")
    for i in range(200):
        with open(os.path.join(repo, f"f{i}.txt"), "w") as f:
            f.write(f"file {i}\n")
    git("add", "-A")
    git("-c", "user.email=b@example.com", "-c", "user.name=b", "commit", "-q", "-m", "files")
    with open(os.path.join(repo, "f0.txt"), "a") as f:
        f.write("changed\n")
    open(os.path.join(repo, "new.txt"), "w").close()
    load0 = os.getloadavg()[0]
    lat, rss = [], []
    whole = {home: [], repo: []}
    for _ in range(runs):
        for ws in (home, repo):
            first_request_at.clear()
            t0 = time.perf_counter()
            # posix_spawn (vfork-style), not fork: a forked child would start as a copy of this
            # Python process, and its pages would count in ru_maxrss before the exec.
            pid = os.posix_spawn(BIN, [BIN, "-p", "hello", "--workspace", ws], env,
                                 file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
            os.waitpid(pid, 0)
            whole[ws].append((time.perf_counter() - t0) * 1000)
            if ws == home:
                lat.append((first_request_at[0] - t0) * 1000)
        # Peak RSS through /usr/bin/time: ru_maxrss of a child spawned from Python counts Python's
        # own pages (the child shares or copies them until exec).
        out = tempfile.mktemp()
        pid = os.posix_spawn("/usr/bin/time", ["/usr/bin/time", "-o", out, "-f", "%M", BIN, "-p", "hello",
                             "--workspace", home], env,
                             file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                           (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
        os.waitpid(pid, 0)
        with open(out) as f:
            rss.append(int(f.read().split()[-1]) / 1024)
        os.unlink(out)
    for ws, label in ((home, "no repository"), (repo, "a git repository")):
        w = whole[ws]
        print(f"the whole trivial turn (start to exit), {label}: median {statistics.median(w):.1f} ms "
              f"(min {min(w):.1f}, max {max(w):.1f}, n={runs})")
    print(f"load average {load0:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"start to first request: median {statistics.median(lat):.1f} ms (min {min(lat):.1f}, max {max(lat):.1f}, n={runs})")
    print(f"peak RSS of a one-turn headless run: median {statistics.median(rss):.1f} MB (max {max(rss):.1f})")

if __name__ == "__main__":
    main()
