"""A small MCP server written with the Python `mcp` SDK, served over streamable HTTP on loopback,
for flower-tui's tests. It listens on a port the kernel picks and prints `PORT <n>` once it does."""

import socket

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("flower-test-python", instructions="A test server for flower-tui.")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of one HTTP request header as this server received it."""
    headers = ctx.headers or {}
    return headers.get(name.lower(), "(absent)")


@server.tool()
def fail(message: str) -> str:
    """Always fails with `message`."""
    raise ValueError(message)


@server.tool()
async def sleep(seconds: float) -> str:
    """Answers after `seconds`."""
    await anyio.sleep(seconds)
    return "slept"


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
