#!/usr/bin/env python3
"""MCP start-up costs of the real release binary:

  1. launch -> first frame (TUI, 200x50 pty, `--demo`) with no MCP server and with three configured
     servers, one of them slow to start (3 s): the first frame must not wait for them;
  2. headless launch -> first model request with one fast server, against the same without any
     server and against the server's own start-up (spawn -> `initialize` -> `tools/list` answered,
     driven from here over its pipes): the goal is <= the server's own start-up + 5 ms.

The server is the rmcp test server inside the `perf` bench binary (FLOWER_MCP_TEST_SERVER=1), a
release build that starts in a few milliseconds.

Usage: cargo build --release && cargo bench --bench perf --no-run && python3 benches/mcp_startup.py [runs]
"""
import glob, json, os, statistics, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import startup  # noqa: E402  (the loopback SSE server)
import tui_bench as tb  # noqa: E402  (the pty terminal)

BIN = os.path.abspath(os.path.join(HERE, "..", "target", "release", "flower-tui"))


def server_bin():
    found = [p for p in glob.glob(os.path.join(HERE, "..", "target", "release", "deps", "perf-*"))
             if os.access(p, os.X_OK) and not p.endswith(".d")]
    if not found:
        sys.exit("no perf bench binary: run `cargo bench --bench perf --no-run` first")
    return os.path.abspath(max(found, key=os.path.getmtime))


def config(servers):
    """config.toml naming `servers`: (name, start mode)."""
    exe = server_bin()
    out = []
    for name, start in servers:
        out.append(f'[mcp_servers.{name}]\ncommand = "{exe}"\n'
                   f'env = {{ FLOWER_MCP_TEST_SERVER = "1", FLOWER_MCP_TEST_START = "{start}" }}\n'
                   'startup_timeout = 10\n')
    return "\n".join(out)


def write_config(root, text):
    d = os.path.join(root, "config", "flower")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.toml"), "w") as f:
        f.write(text)


def first_frame(root, launches):
    env = tb.base_env(root)
    times = []
    children = []
    try:
        for _ in range(launches):
            c = tb.Child(["--demo", "--workspace", os.path.join(root, "ws")], env)
            children.append(c)
            t = c.read_until(b"DEMO", 10.0, "the status line (DEMO)")
            times.append((t - c.t_spawn) * 1000)
            c.quit()
    finally:
        for c in children:
            c.kill()
    return times


def server_own_startup(runs):
    """Spawn the server and drive the handshake from here: spawn -> tools/list answered."""
    exe = server_bin()
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env={"FLOWER_MCP_TEST_SERVER": "1",
                                                             "PATH": os.environ.get("PATH", "")})
        p.stdin.write((json.dumps(msgs[0]) + "\n").encode())
        p.stdin.flush()
        p.stdout.readline()
        p.stdin.write((json.dumps(msgs[1]) + "\n" + json.dumps(msgs[2]) + "\n").encode())
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line or json.loads(line).get("id") == 2:
                break
        times.append((time.perf_counter() - t0) * 1000)
        p.stdin.close()
        p.wait()
    return times


def first_request(root, runs):
    import http.server
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), startup.H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": root, "XDG_DATA_HOME": root + "/data",
           "XDG_CONFIG_HOME": root + "/config", "ANTHROPIC_API_KEY": "sk-bench",
           "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{srv.server_address[1]}"}
    lat = []
    for _ in range(runs):
        startup.first_request_at.clear()
        t0 = time.perf_counter()
        pid = os.posix_spawn(BIN, [BIN, "-p", "hello", "--workspace", root + "/ws"], env,
                             file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                           (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
        os.waitpid(pid, 0)
        lat.append((startup.first_request_at[0] - t0) * 1000)
    srv.shutdown()
    return lat


def med(xs):
    return f"median {statistics.median(xs):.1f} ms (min {min(xs):.1f}, max {max(xs):.1f}, n={len(xs)})"


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    tb.BIN = BIN
    print(f"MCP start-up bench: {BIN}, load average {os.getloadavg()[0]:.2f}", flush=True)
    root = tempfile.mkdtemp(prefix="mcp-bench-")
    os.makedirs(os.path.join(root, "ws"), exist_ok=True)
    write_config(root, "")
    none = first_frame(root, runs)
    write_config(root, config([("a", "normal"), ("b", "normal"), ("slow", "slow:3000")]))
    three = first_frame(root, runs)
    print(f"1. first frame, no MCP server:               {med(none)}")
    print(f"   first frame, 3 servers (one takes 3 s):    {med(three)}")
    own = server_own_startup(runs)
    write_config(root, "")
    without = first_request(root, runs)
    write_config(root, config([("fast", "normal")]))
    with_one = first_request(root, runs)
    print(f"2. the server's own start-up (to tools/list): {med(own)}")
    print(f"   headless first request, no MCP server:     {med(without)}")
    print(f"   headless first request, one fast server:   {med(with_one)}")
    m = statistics.median
    print(f"   beyond the server's own start-up:          {m(with_one) - m(own):.1f} ms (goal <= 5 ms; "
          f"flower-tui's own start-up without a server is part of it)")
    print(f"   added by the server to the first request:  {m(with_one) - m(without):.1f} ms")
    print(f"   added by three servers to the first frame: {m(three) - m(none):.1f} ms (min to min "
          f"{min(three) - min(none):.1f} ms)")


if __name__ == "__main__":
    main()
