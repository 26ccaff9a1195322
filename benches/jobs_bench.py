#!/usr/bin/env python3
"""Background jobs under a flood, through the real TUI in a pty (reuses tui_bench's harness).

The loopback model answers the first request with ten `bash` calls with `run_in_background`, each
printing 10 MB as fast as it can; later requests get a short reply. Measured: flower-tui's RSS
before the jobs start and its peak (VmHWM) after they all ended, and keystroke -> frame while the
jobs flood (keys typed ~100 ms apart into the input box).

    cargo build --release && python3 benches/jobs_bench.py [--bin target/release/flower-tui]
"""
import http.server
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tui_bench as tb  # noqa: E402

JOBS = 10
FLOOD = "head -c 10000000 /dev/zero | tr '\\0' 'x' | fold -w 99"


class Server:
    def __init__(self):
        self.requests = 0
        srv = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length", 0)))
                srv.requests += 1
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.send_header("connection", "close")
                self.end_headers()
                w = self.wfile
                w.write(tb.sse_event("message_start", {"type": "message_start", "message": {
                    "id": "m", "type": "message", "role": "assistant", "model": "claude-bench",
                    "content": [], "stop_reason": None, "stop_sequence": None,
                    "usage": {"input_tokens": 1200, "output_tokens": 1}}}))
                if srv.requests == 1:
                    for i in range(JOBS):
                        w.write(tb.sse_event("content_block_start", {"type": "content_block_start", "index": i,
                                "content_block": {"type": "tool_use", "id": f"toolu_{i}", "name": "bash", "input": {}}}))
                        w.write(tb.sse_event("content_block_delta", {"type": "content_block_delta", "index": i,
                                "delta": {"type": "input_json_delta", "partial_json": json.dumps(
                                    {"command": FLOOD, "run_in_background": True})}}))
                        w.write(tb.sse_event("content_block_stop", {"type": "content_block_stop", "index": i}))
                    stop = "tool_use"
                else:
                    w.write(tb.sse_event("content_block_start", {"type": "content_block_start", "index": 0,
                            "content_block": {"type": "text", "text": ""}}))
                    w.write(tb.sse_event("content_block_delta", {"type": "content_block_delta", "index": 0,
                            "delta": {"type": "text_delta", "text": "ok"}}))
                    w.write(tb.sse_event("content_block_stop", {"type": "content_block_stop", "index": 0}))
                    stop = "end_turn"
                w.write(tb.sse_event("message_delta", {"type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}))
                w.write(tb.sse_event("message_stop", {"type": "message_stop"}))
                w.write(b"0\r\n\r\n")
                self.close_connection = True

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def kib(field):
    return int(field.split()[0]) if field else 0


def main():
    args = sys.argv[1:]
    if args[:1] == ["--bin"] and len(args) > 1:
        tb.BIN = args[1]
    tb.BIN = os.path.abspath(tb.BIN)
    root = tempfile.mkdtemp(prefix="jobs-bench-")
    srv = Server()
    c = None
    try:
        env = tb.base_env(root)
        env.update({"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{srv.port}"})
        c = tb.Child(["--yes", "--sandbox", "off", "--workspace", os.path.join(root, "ws")], env)
        c.read_until(b"Ask anything", 15.0, "the input box placeholder")
        c.drain(0.5)
        before = kib(c.status_field("VmRSS"))
        c.send(b"flood")
        c.drain(0.2)
        c.send(b"\r")
        lat, missed = [], 0
        keys = b"QXZVWJYUGK"
        end = time.perf_counter() + 60
        i = 0
        # Type while the ten jobs start and flood, until the turn's last request came.
        while srv.requests < 2 and time.perf_counter() < end:
            ch = bytes([keys[i % len(keys)]])
            i += 1
            t_w = time.perf_counter()
            c.send(ch)
            got = None
            stop = t_w + tb.KEY_TIMEOUT
            while (left := stop - time.perf_counter()) > 0:
                data, t = c.read(left)
                if ch in data:
                    got = t
                    break
            if got is None:
                missed += 1
            else:
                lat.append((got - t_w) * 1000)
            c.drain(max(0.0, t_w + 0.1 - time.perf_counter()))
        c.drain(2.0)
        rss = kib(c.status_field("VmRSS"))
        peak = kib(c.status_field("VmHWM"))
        logs = os.path.join(root, "data", "flower", "runs")
        written = 0
        for dirpath, _, files in os.walk(logs):
            written += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files if f.endswith(".log"))
        print(f"jobs bench: {JOBS} jobs x 10 MB, {written / 1e6:.1f} MB in their files; RSS before "
              f"{before / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB (+{(peak - before) / 1024:.1f} MiB), "
              f"after {rss / 1024:.1f} MiB; load average {os.getloadavg()[0]:.2f}", flush=True)
        if len(lat) >= 2:
            q = statistics.quantiles(lat, n=100, method="inclusive")
            print(f"keystroke -> frame while they flood: p50 {q[49]:.1f} ms, p99 {q[98]:.1f} ms, "
                  f"max {max(lat):.1f} ms (n={len(lat)}, missed {missed})", flush=True)
        else:
            print(f"too few keystrokes measured ({len(lat)}, missed {missed})", flush=True)
    finally:
        if c:
            c.kill()
        srv.httpd.shutdown()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
