"""An editor, played by the ACP Python SDK (the `agent-client-protocol` package from PyPI): it
starts `flower-tui acp` and drives it through one plan, then prints what it saw as one JSON object.

Usage: python client.py PLAN_JSON BINARY [ARGS...]

The plan (every key optional but `cwd`):
  cwd          the session's working directory (absolute)
  fs           offer fs/read_text_file and fs/write_text_file (the "editor's buffers")
  terminal     offer terminal/*: commands run as real processes of this client (the "editor's
               terminals"), each op logged
  buffers      {absolute path: text}: what a read answers instead of the disk (an unsaved buffer)
  notices      offer the session.notices capability
  mcp_servers  [{"name", "command", "args", "env": {NAME: value}}]: the editor's stdio MCP servers
  load         a session id to load instead of opening a new session
  list         call session/list first
  mode         a mode id to set before the prompts
  prompts      [{"text": ..., "image": {"data": base64, "mime": ...}, "cancel_on": "chunk"|"tool_call"|"terminal", "concurrent": text}]
  permissions  answers to tool approvals, in order: an option id, or "cancelled" (default: allow-once)
  review       answers to the handoff review, in order: {"answer": "wait"|"continue", "append": text}

The agent's environment is this process's (the test sets the provider to its loopback fake).
"""

import asyncio
import json
import os
import sys
import time

from acp import image_block, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    FileSystemCapabilities,
    McpServerStdio,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)


def dump(model):
    if model is None:
        return None
    if hasattr(model, "model_dump"):
        return model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return model


class Editor:
    def __init__(self, plan):
        self.plan = plan
        self.log = []
        self.permissions = list(plan.get("permissions", []))
        self.review = list(plan.get("review", []))
        self.buffers = plan.get("buffers", {})
        self.on_chunk = None
        self.on_tool_call = None
        self.on_terminal = None
        self.first_chunk = None
        self.handoff_paths = {}
        self.terminals = {}
        self.terminal_count = 0

    # The client's side of the protocol.
    async def session_update(self, session_id, update, **kwargs):
        u = dump(update)
        self.log.append({"kind": "update", "session": session_id, "update": u})
        kind = u.get("sessionUpdate")
        if kind == "agent_message_chunk" and self.first_chunk is None:
            self.first_chunk = time.monotonic()
        if kind == "agent_message_chunk" and self.on_chunk:
            hook, self.on_chunk = self.on_chunk, None
            asyncio.get_running_loop().create_task(hook())
        if kind == "tool_call" and self.on_tool_call and not u["toolCallId"].startswith("handoff-"):
            hook, self.on_tool_call = self.on_tool_call, None
            asyncio.get_running_loop().create_task(hook())
        if kind in ("tool_call", "tool_call_update") and u["toolCallId"].startswith("handoff-"):
            for loc in u.get("locations") or []:
                self.handoff_paths[u["toolCallId"]] = loc["path"]

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        call = dump(tool_call)
        entry = {
            "kind": "permission",
            "session": session_id,
            "tool_call": call,
            "options": [dump(o) for o in options],
        }
        if call["toolCallId"].startswith("handoff-"):
            step = self.review.pop(0) if self.review else {"answer": "continue"}
            if step.get("append"):
                path = self.handoff_paths.get(call["toolCallId"])
                for loc in call.get("locations") or []:
                    path = loc["path"]
                with open(path, "a", encoding="utf-8") as f:
                    f.write(step["append"])
                entry["edited"] = path
            answer = step["answer"]
        else:
            answer = self.permissions.pop(0) if self.permissions else "allow-once"
        entry["answer"] = answer
        self.log.append(entry)
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        self.log.append({"kind": "read", "path": path})
        if path in self.buffers:
            text = self.buffers[path]
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.log.append({"kind": "write", "path": path, "content": content})
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
        self.buffers.pop(path, None)
        return WriteTextFileResponse()

    # The editor's terminals: real processes, their output kept within the agent's byte limit.
    async def create_terminal(self, session_id, command, args=None, env=None, cwd=None,
                              output_byte_limit=None, **kwargs):
        self.terminal_count += 1
        tid = "term-%d" % self.terminal_count
        penv = dict(os.environ)
        for v in env or []:
            penv[v.name] = v.value
        proc = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env=penv,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )
        term = {"proc": proc, "out": bytearray(), "truncated": False, "limit": output_byte_limit}

        async def pump():
            while True:
                data = await proc.stdout.read(65536)
                if not data:
                    break
                term["out"] += data
                limit = term["limit"]
                if limit is not None and len(term["out"]) > limit:
                    del term["out"][: len(term["out"]) - limit]
                    term["truncated"] = True

        term["pump"] = asyncio.get_running_loop().create_task(pump())
        if self.on_terminal:
            hook, self.on_terminal = self.on_terminal, None
            asyncio.get_running_loop().create_task(hook())
        self.terminals[tid] = term
        self.log.append({"kind": "terminal", "op": "create", "id": tid, "command": command,
                         "args": args or [], "cwd": cwd, "limit": output_byte_limit,
                         "env": {v.name: v.value for v in env or []}, "pid": proc.pid})
        return CreateTerminalResponse(terminal_id=tid)

    def _status(self, term):
        code = term["proc"].returncode
        if code is None:
            return None
        if code < 0:
            return TerminalExitStatus(signal="SIG" + __import__("signal").Signals(-code).name[3:])
        return TerminalExitStatus(exit_code=code)

    async def terminal_output(self, session_id, terminal_id, **kwargs):
        term = self.terminals[terminal_id]
        if term["proc"].returncode is not None:
            await term["pump"]
        self.log.append({"kind": "terminal", "op": "output", "id": terminal_id})
        return TerminalOutputResponse(
            output=term["out"].decode("utf-8", "replace"),
            truncated=term["truncated"],
            exit_status=self._status(term),
        )

    async def wait_for_terminal_exit(self, session_id, terminal_id, **kwargs):
        term = self.terminals[terminal_id]
        await term["proc"].wait()
        await term["pump"]
        self.log.append({"kind": "terminal", "op": "wait", "id": terminal_id})
        st = self._status(term)
        return WaitForTerminalExitResponse(exit_code=st.exit_code, signal=st.signal)

    async def kill_terminal(self, session_id, terminal_id, **kwargs):
        term = self.terminals[terminal_id]
        self.log.append({"kind": "terminal", "op": "kill", "id": terminal_id})
        if term["proc"].returncode is None:
            try:
                os.killpg(term["proc"].pid, 9)
            except ProcessLookupError:
                pass
            await term["proc"].wait()
        return KillTerminalResponse()

    async def release_terminal(self, session_id, terminal_id, **kwargs):
        term = self.terminals.pop(terminal_id, None)
        self.log.append({"kind": "terminal", "op": "release", "id": terminal_id})
        if term and term["proc"].returncode is None:
            try:
                os.killpg(term["proc"].pid, 9)
            except ProcessLookupError:
                pass
            await term["proc"].wait()
        return ReleaseTerminalResponse()

    def on_connect(self, conn):
        pass


async def drive(plan, command, args):
    editor = Editor(plan)
    report = {"log": editor.log, "results": []}
    env = dict(os.environ)
    stderr = open(plan["stderr"], "wb") if plan.get("stderr") else None
    async with spawn_agent_process(
        lambda _agent: editor,
        command,
        *args,
        env=env,
        cwd=plan["cwd"],
        transport_kwargs={"stderr": stderr},
    ) as (conn, process):
        caps = ClientCapabilities(
            fs=FileSystemCapabilities(
                read_text_file=bool(plan.get("fs")), write_text_file=bool(plan.get("fs"))
            ),
            terminal=bool(plan.get("terminal")),
        )
        if plan.get("notices"):
            caps = ClientCapabilities.model_validate(
                {**dump(caps), "session": {"notices": {}}}
            )
        init = await conn.initialize(protocol_version=1, client_capabilities=caps)
        report["init"] = dump(init)
        if plan.get("list"):
            listed = await conn.list_sessions(cwd=plan["cwd"])
            report["list"] = dump(listed)
        if plan.get("load"):
            loaded = await conn.load_session(cwd=plan["cwd"], session_id=plan["load"], mcp_servers=[])
            report["loaded"] = dump(loaded)
            session_id = plan["load"]
        else:
            servers = [
                McpServerStdio(
                    name=m["name"], command=m["command"], args=m.get("args", []),
                    env=[EnvVariable(name=k, value=v) for k, v in m.get("env", {}).items()],
                )
                for m in plan.get("mcp_servers", [])
            ]
            opened = await conn.new_session(cwd=plan["cwd"], mcp_servers=servers)
            report["new"] = dump(opened)
            session_id = opened.session_id
        report["session_id"] = session_id
        if plan.get("mode"):
            await conn.set_session_mode(session_id=session_id, mode_id=plan["mode"])
        for step in plan.get("prompts", []):
            report["results"].append(await prompt(conn, editor, session_id, step))
    if stderr:
        stderr.close()
    report["exit_code"] = process.returncode
    return report


async def prompt(conn, editor, session_id, step):
    result = {}
    concurrent = []

    async def interject():
        if step.get("concurrent"):
            try:
                await conn.prompt(session_id=session_id, prompt=[text_block(step["concurrent"])])
                concurrent.append({"ok": True})
            except Exception as e:  # the refusal is the point
                concurrent.append({"error": str(e)})
        if step.get("cancel_on"):
            await conn.cancel(session_id=session_id)

    if step.get("cancel_on") == "chunk" or (step.get("concurrent") and not step.get("cancel_on")):
        editor.on_chunk = interject
    elif step.get("cancel_on") == "tool_call":
        editor.on_tool_call = interject
    elif step.get("cancel_on") == "terminal":
        editor.on_terminal = interject
    editor.first_chunk = None
    started = time.monotonic()
    try:
        blocks = [text_block(step["text"])]
        if "image" in step:
            blocks.append(image_block(step["image"]["data"], step["image"]["mime"]))
        response = await conn.prompt(session_id=session_id, prompt=blocks)
        result["stop_reason"] = response.stop_reason
    except Exception as e:
        result["error"] = str(e)
    if editor.first_chunk is not None:
        result["first_chunk_ms"] = (editor.first_chunk - started) * 1000.0
    result["total_ms"] = (time.monotonic() - started) * 1000.0
    if concurrent:
        result["concurrent"] = concurrent[0]
    return result


def main():
    plan = json.loads(sys.argv[1])
    command, args = sys.argv[2], sys.argv[3:]
    report = asyncio.run(drive(plan, command, args))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
