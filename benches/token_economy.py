#!/usr/bin/env python3
"""Token economy: flower-tui beside Claude Code, on the same scripted sessions, against the same
scripted loopback model (Anthropic Messages API, SSE).

Two sessions, each long enough to cross flower-tui's handoff line (150K of a 200K window) if
nothing were masked:
  reads40  40 `read` calls of 12 KB files; a fact is planted in the third file;
  mix150   150 calls, two reads of 8 KB files to one command printing a 6 KB log; a fact is
           planted in the first log.
The scripted model answers each main-thread request with the next call of the session (in the
agent's own tool names: `read_file`/`bash` for flower-tui, `Read`/`Bash` for Claude Code). At the
end it needs the planted fact: it answers at once when the fact is in the request; otherwise it
tries to get it back as a model would, with what the request offers (a masked output's `recall`
call, a `recall` search, or the source's path to read again), up to three times; the session
fails when the fact is not reached. A handoff's writing request (flower-tui) gets a document
that names no file (the engine adds `Touched`); a compaction request (Claude Code) gets a
summary that lists every path it read and command it ran. Other requests (an agent's side
calls) get a short text.

Per agent and session: requests, bytes sent (HTTP bodies), and a cache-aware cost. A request is
read in the order a prompt cache reads it (tools, system, then each message block, without the
`cache_control` markers); the bytes it shares as a prefix with an earlier request of the same
thread (same tools and system, the last three) count 0.1, the rest 1.25, as the provider bills
cache reads and writes. Also: the share of input bytes served as a repeated prefix, handoffs,
compactions, and whether the fact was reached. Usage reported to the agents is those counts over
4 bytes a token.

Claude Code is installed by this script from the npm registry into target/tmp/claude-code:
@anthropic-ai/claude-code@2.1.112, the last version that is JavaScript only (later versions
ship a native binary). It runs headless (`-p`) against ANTHROPIC_BASE_URL with an API key, so
no login; telemetry, error reporting, the auto-updater and non-essential traffic are off; HOME
is a temp dir.

Usage: cargo build && python3 benches/token_economy.py [--bin PATH] [--only reads40|mix150]
       [--agents flower,claude] [--keep]
"""
import argparse, hashlib, http.server, json, os, shutil, subprocess, sys, tempfile
import threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
CC_VERSION = "2.1.112"
CC_DIR = os.path.join(ROOT, "target", "tmp", "claude-code")
MODEL = "claude-sonnet-4-5"
TIMEOUT = 1800
# A window whose handoff line (16k, a small local model's) a masked session reaches.
SMALL_WINDOW = ("--window", "32000", "--headroom", "16000")


# ---------------------------------------------------------------- the sessions

def text_block(seed, size):
    """Deterministic prose of about `size` bytes, in lines of ~90 characters."""
    words = ("alpha beta gamma delta epsilon parser buffer index token module config handler "
             "request response stream cache value field record entry layout render commit").split()
    out, n = [], 0
    h = hashlib.sha256(seed.encode()).digest()
    i = 0
    while n < size:
        line = []
        while len(" ".join(line)) < 88:
            h = hashlib.sha256(h).digest() if i % 32 == 31 else h
            line.append(words[(h[i % 32] + i) % len(words)])
            i += 1
        s = " ".join(line)
        out.append(s)
        n += len(s) + 1
    return "\n".join(out) + "\n"


class Session:
    def __init__(self, name, calls, fact, source, question, keyword, files):
        self.name, self.calls, self.fact, self.source = name, calls, fact, source
        self.question, self.keyword, self.files = question, keyword, files

    def task(self):
        return ("Go through these in order, one call at a time: " +
                "; ".join(f"{k} {p}" for k, p in self.calls[:3]) +
                f"; and so on ({len(self.calls)} calls in all). Then answer: {self.question}")


def reads40():
    files, calls = {}, []
    for i in range(40):
        p = f"docs/part_{i:02}.md"
        body = text_block(p, 12 * 1024)
        if i == 2:
            lines = body.split("\n")
            lines.insert(40, "The release codename is PLUM-SPARROW-42.")
            body = "\n".join(lines)
        files[p] = body
        calls.append(("read", p))
    return Session("reads40", calls, "PLUM-SPARROW-42", ("read", "docs/part_02.md"),
                   "what is the release codename?", "codename", files)


def mix150():
    files, calls = {}, []
    for i in range(150):
        if i % 3 == 2:
            p = f"logs/run_{i:03}.log"
            body = text_block(p, 6 * 1024)
            if i == 2:
                lines = body.split("\n")
                lines.insert(30, "FAILED test_parse_unicode_escape: expected U+00E9, got '?'")
                body = "\n".join(lines)
            files[p] = body
            calls.append(("run", f"cat {p}"))
        else:
            p = f"src/mod_{i:03}.txt"
            files[p] = text_block(p, 8 * 1024)
            calls.append(("read", p))
    return Session("mix150", calls, "test_parse_unicode_escape", ("run", "cat logs/run_002.log"),
                   "which test failed in the first log?", "FAILED", files)


# ---------------------------------------------------------------- request accounting

def strip_cc(v):
    if isinstance(v, dict):
        return {k: v2 for k, v2 in v.items() if k != "cache_control"}
    return v


def units(body):
    """The request as a prompt cache reads it: tools, system, then each message block."""
    out = []
    for t in body.get("tools") or []:
        out.append("tool:" + json.dumps(strip_cc(t), sort_keys=True, separators=(",", ":")))
    system = body.get("system")
    if isinstance(system, str):
        out.append("system:" + json.dumps(system))
    elif isinstance(system, list):
        for b in system:
            out.append("system:" + json.dumps(strip_cc(b), sort_keys=True, separators=(",", ":")))
    head = len(out)
    for m in body.get("messages") or []:
        c = m.get("content")
        if isinstance(c, list):
            for b in c:
                out.append(m.get("role", "?") + ":" +
                           json.dumps(strip_cc(b), sort_keys=True, separators=(",", ":")))
        else:
            out.append(m.get("role", "?") + ":" + json.dumps(c))
    return out, head


def lcp(a, b):
    """Length of the common prefix of two strings (binary search on slices: C speed)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class Ledger:
    """Every request of one agent run."""

    def __init__(self):
        self.threads = {}  # tools+system hash -> last canonical strings
        self.rows = []
        self.lock = threading.Lock()

    def account(self, raw, body, kind):
        us, head = units(body)
        canon = "".join(us)
        thread = hashlib.sha256("".join(us[:head]).encode()).hexdigest()
        with self.lock:
            prev = self.threads.setdefault(thread, [])
            repeat = max((lcp(canon, p) for p in prev), default=0)
            prev.append(canon)
            del prev[:-3]
            self.rows.append({"kind": kind, "raw": len(raw), "canon": len(canon), "repeat": repeat})
        return len(canon), repeat

    def totals(self):
        t = {"requests": len(self.rows), "raw": sum(r["raw"] for r in self.rows),
             "canon": sum(r["canon"] for r in self.rows),
             "repeat": sum(r["repeat"] for r in self.rows)}
        t["cost"] = 0.1 * t["repeat"] + 1.25 * (t["canon"] - t["repeat"])
        t["share"] = t["repeat"] / t["canon"] if t["canon"] else 0.0
        for k in ("handoff", "compaction", "side"):
            t[k] = sum(1 for r in self.rows if r["kind"] == k)
        return t


# ---------------------------------------------------------------- the scripted model

def sse(name, data):
    payload = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
    return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"


def last_user_text(body):
    for m in reversed(body.get("messages") or []):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            return c
        return "\n".join(b.get("text", "") for b in c if isinstance(b, dict))
    return ""


class Script:
    """One agent's run of a session: which call comes next, and the end."""

    def __init__(self, session, agent, ws):
        self.s, self.agent, self.ws = session, agent, ws
        self.step = 0
        self.retrievals = 0
        self.reached = None  # True / False once the session ended
        self.ids = 0
        self.lock = threading.Lock()

    def tool_names(self):
        return ("read_file", "bash") if self.agent == "flower" else ("Read", "Bash")

    def call(self, kind, arg):
        read, bash = self.tool_names()
        if kind == "read":
            if self.agent == "flower":
                return read, {"path": arg}
            return read, {"file_path": os.path.join(self.ws, arg)}
        if kind == "recall":
            return "recall", arg
        if self.agent == "flower":
            return bash, {"command": arg}
        return bash, {"command": arg, "description": "Show the log"}

    def next_reply(self, body):
        """(text, tool call or None) for a main-thread request."""
        with self.lock:
            if self.step < len(self.s.calls):
                kind, arg = self.s.calls[self.step]
                self.step += 1
                return f"Step {self.step}.", self.call(kind, arg)
            return self.final(body)

    def final(self, body):
        text = json.dumps(body)
        if self.s.fact in text:
            self.reached = True
            return f"The answer: {self.s.fact}.", None
        if self.retrievals >= 3:
            self.reached = False
            return "I could not find it any more.", None
        self.retrievals += 1
        kind, source = self.s.source
        tools = [t.get("name") for t in body.get("tools") or []]
        # A masked output's stub that names the source and how to recall it.
        needle = json.dumps(source)[1:-1]
        for m in body.get("messages") or []:
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                c = b.get("content") if isinstance(b, dict) else None
                if isinstance(c, str) and c.startswith("[output masked") and needle in c:
                    at = c.find('recall {"call": "')
                    if at >= 0:
                        cid = c[at + len('recall {"call": "'):].split('"', 1)[0]
                        return "Getting it back.", self.call("recall", {"call": cid})
        if "recall" in tools:
            return "Searching.", self.call("recall", {"query": self.s.keyword})
        path = source.split()[-1]
        if path in text:
            return "Looking again.", self.call(kind, source)
        self.reached = False
        return "I could not find it any more.", None


HANDOFF_DOC = ("## Doing\nWorking through the calls of the task in order; {n} done so far.\n"
               "## Decided\n- One call at a time, in the order given.\n## Dead ends\n(empty)\n"
               "## Next\nContinue with call {m}.\n## Scene\n(empty)\n")


class Server:
    def __init__(self, script, ledger):
        self.script, self.ledger = script, ledger
        srv = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw)
                except ValueError:
                    self.send_error(400)
                    return
                if not self.path.split("?", 1)[0].endswith("/messages"):
                    self.send_error(404)
                    return
                srv.answer(self, raw, body)

            def do_GET(self):
                self.send_error(404)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def classify(self, body):
        tools = [t.get("name") for t in body.get("tools") or []]
        last = last_user_text(body)
        if "write a handoff document now" in last:
            return "handoff"
        if "create a detailed summary of the conversation" in last or \
                "summary of the conversation so far" in last:
            return "compaction"
        read, _ = self.script.tool_names()
        if read in tools and body.get("tool_choice", {}).get("type") != "none":
            return "main"
        return "side"

    def answer(self, h, raw, body):
        kind = self.classify(body)
        canon, repeat = self.ledger.account(raw, body, kind)
        tool = None
        if kind == "main":
            text, tool = self.script.next_reply(body)
        elif kind == "handoff":
            n = self.script.step
            text = HANDOFF_DOC.format(n=n, m=n + 1)
        elif kind == "compaction":
            done = self.script.s.calls[:self.script.step]
            text = ("Summary: the user asked to go through a list of calls in order and then "
                    "answer a question. Done so far, in order: " +
                    "; ".join(f"{k} {a}" for k, a in done) + ". Next: continue the list.")
        else:
            text = "ok"
        self.stream(h, text, tool, canon, repeat)

    def stream(self, h, text, tool, canon, repeat):
        usage = {"input_tokens": max(1, (canon - repeat) // 4),
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": repeat // 4,
                 "output_tokens": 1}
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("transfer-encoding", "chunked")
        h.send_header("connection", "close")
        h.end_headers()
        w = h.wfile
        with self.script.lock:
            self.script.ids += 1
            mid = f"msg_{self.script.ids:05}"
        w.write(sse("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": MODEL,
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}))
        w.write(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                            "content_block": {"type": "text", "text": ""}}))
        w.write(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "text_delta", "text": text}}))
        w.write(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        stop = "end_turn"
        if tool:
            stop = "tool_use"
            w.write(sse("content_block_start", {"type": "content_block_start", "index": 1,
                                                "content_block": {"type": "tool_use",
                                                                  "id": f"toolu_{mid[4:]}",
                                                                  "name": tool[0], "input": {}}}))
            w.write(sse("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(tool[1])}}))
            w.write(sse("content_block_stop", {"type": "content_block_stop", "index": 1}))
        w.write(sse("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 20}}))
        w.write(sse("message_stop", {"type": "message_stop"}))
        w.write(b"0\r\n\r\n")
        w.flush()
        h.close_connection = True

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# ---------------------------------------------------------------- the agents

def install_claude_code():
    cli = os.path.join(CC_DIR, "node_modules", "@anthropic-ai", "claude-code", "cli.js")
    if os.path.exists(cli):
        return cli
    os.makedirs(CC_DIR, exist_ok=True)
    pkg = os.path.join(CC_DIR, "package.json")
    if not os.path.exists(pkg):
        with open(pkg, "w") as f:
            f.write('{"private": true}\n')
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--omit=optional",
                    f"@anthropic-ai/claude-code@{CC_VERSION}"], cwd=CC_DIR, check=True,
                   stdout=subprocess.DEVNULL)
    return cli


def prepare(root, session):
    ws = os.path.join(root, "ws")
    for p, body in session.files.items():
        full = os.path.join(ws, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(body)
    subprocess.run(["git", "init", "-q", ws], check=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": root, "LANG": "C.UTF-8",
           "XDG_DATA_HOME": os.path.join(root, "data"),
           "XDG_CONFIG_HOME": os.path.join(root, "config"),
           "XDG_CACHE_HOME": os.path.join(root, "cache"), "TMPDIR": os.path.join(root, "tmp")}
    for d in ("data", "config", "cache", "tmp"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    return ws, env


def run_agent(agent, session, flower_bin, cc_cli, keep, extra=()):
    root = tempfile.mkdtemp(prefix=f"token-economy-{agent}-")
    ws, env = prepare(root, session)
    script, ledger = Script(session, agent, ws), Ledger()
    server = Server(script, ledger)
    env["ANTHROPIC_API_KEY"] = "sk-ant-bench-0000000000000000"
    env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{server.port}"
    if agent == "flower":
        cmd = [flower_bin, "-p", session.task(), "--yes", "--output", "json", "--workspace", ws,
               "--model", MODEL, "--max-iterations", "400", *extra]
    else:
        env.update({"DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
                    "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    "ANTHROPIC_MODEL": MODEL, "ANTHROPIC_SMALL_FAST_MODEL": MODEL})
        cmd = ["node", cc_cli, "-p", session.task(), "--output-format", "json",
               "--allowedTools", "Read,Bash", "--max-turns", "400", "--model", MODEL]
    t0 = time.monotonic()
    out = subprocess.run(cmd, cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         timeout=TIMEOUT)
    secs = time.monotonic() - t0
    server.close()
    t = ledger.totals()
    t.update({"agent": agent, "session": session.name, "exit": out.returncode, "secs": secs,
              "reached": bool(script.reached), "steps": script.step, "extra": " ".join(extra)})
    if agent == "flower":
        events = [json.loads(l) for l in out.stdout.decode(errors="replace").splitlines()
                  if l.startswith("{")]
        t["handoffs_done"] = sum(1 for e in events if e.get("type") == "handoff"
                                 and isinstance(e.get("phase"), dict)
                                 and e["phase"].get("phase") == "done")
    if out.returncode != 0 or not script.reached:
        sys.stderr.write(f"{agent}/{session.name}: exit {out.returncode}; stderr tail:\n"
                         f"{out.stderr.decode(errors='replace')[-2000:]}\n")
    if keep:
        t["root"] = root
    else:
        shutil.rmtree(root, ignore_errors=True)
    return t


def table(results):
    by = {}
    for r in results:
        by.setdefault(r["session"], {})[r["agent"] + r["extra"]] = r
    lines = ["| session | agent | requests | bytes sent | cache-aware cost | × Claude Code | "
             "repeated prefix | handoffs | compactions | fact |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for s, agents in by.items():
        cc = agents.get("claude")
        for a, r in agents.items():
            ratio = f"{r['cost'] / cc['cost']:.2f}" if cc and cc["cost"] else "–"
            name = "flower-tui" if a.startswith("flower") else "Claude Code " + CC_VERSION
            if r["extra"]:
                name += f" `{r['extra']}`"
            lines.append(
                f"| {s} | {name} | "
                f"{r['requests']} | {r['raw'] / 1e6:.2f} MB | {r['cost'] / 1e6:.2f} M | {ratio} | "
                f"{r['share'] * 100:.1f} % | {r['handoff']} | {r['compaction']} | "
                f"{'reached' if r['reached'] else 'LOST'} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "flower-tui"))
    ap.add_argument("--only", choices=["reads40", "mix150"])
    ap.add_argument("--agents", default="flower,claude")
    ap.add_argument("--keep", action="store_true", help="keep the temp dirs (printed)")
    ap.add_argument("--json", action="store_true", help="print every figure as JSON too")
    args = ap.parse_args()
    agents = args.agents.split(",")
    if "flower" in agents and not os.path.exists(args.bin):
        sys.exit(f"{args.bin} is missing: run `cargo build` first (or pass --bin)")
    cc = install_claude_code() if "claude" in agents else None
    sessions = [s for s in (reads40(), mix150()) if args.only in (None, s.name)]
    results = []
    runs = [(s, a, ()) for s in sessions for a in agents]
    if "flower" in agents:
        # The same session where flower-tui's handoff line is reached with masking on too.
        runs += [(s, "flower", SMALL_WINDOW) for s in sessions if s.name == "mix150"]
    for s, a, extra in runs:
        r = run_agent(a, s, args.bin, cc, args.keep, extra)
        print(f"{s.name} {a} {' '.join(extra)}: {r['requests']} requests, "
              f"{r['raw'] / 1e6:.2f} MB, cost {r['cost'] / 1e6:.2f} M, repeated "
              f"{r['share'] * 100:.1f} %, {r['handoff']} handoffs, {r['compaction']} compactions, "
              f"{r['side']} side requests, fact {'reached' if r['reached'] else 'LOST'}, "
              f"{r['secs']:.0f} s", flush=True)
        results.append(r)
    print()
    print(table(results))
    if args.json:
        print(json.dumps(results, indent=1))
    failed = [r for r in results if not r["reached"]]
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
