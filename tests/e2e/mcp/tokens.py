"""A team's tokens end to end (issue 42): `scholia mcp --http --tokens-file FILE` with the MCP
Python SDK. Each token gets its own scope — alice read-only in Journal, bob only find_notes —
an unknown token gets 401, a token removed from the file is refused on the next request with
no restart, and a file others can read is refused at start.

Env: SCHOLIA_BIN, VAULT (the example vault, with Journal/ and Microbes/), WORK.
"""

import asyncio
import hashlib
import os
import signal
import socket
import subprocess
import time

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

BIN = os.environ["SCHOLIA_BIN"]
VAULT = os.environ["VAULT"]
WORK = os.environ["WORK"]
ALICE = "alice-token-for-the-team-test-0123"
BOB = "bob-token-for-the-team-test-456789"


def log(msg):
    print(msg, file=__import__("sys").stderr, flush=True)


def entry(name, token, extra=""):
    return f'[[token]]\nname = "{name}"\nsha256 = "{hashlib.sha256(token.encode()).hexdigest()}"\n{extra}\n'


def write_tokens(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def text(res):
    return "\n".join(c.text for c in res.content if getattr(c, "text", None))


async def session_for(url, token, work):
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with client:
        async with streamable_http_client(url, http_client=client) as (r, w, *_):
            async with ClientSession(r, w) as s:
                await s.initialize()
                return await work(s)


async def main():
    tokens = os.path.join(WORK, "tokens.toml")
    alice = entry("alice", ALICE, 'read_only = true\nallow_folder = ["Microbes"]')
    bob = entry("bob", BOB, 'tools = ["find_notes"]')
    # Readable by others: refused at start, naming the fix.
    write_tokens(tokens, alice + bob, 0o644)
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    port_no = port.getsockname()[1]
    port.close()
    args = [BIN, "mcp", "--vault", VAULT, "--http", f"127.0.0.1:{port_no}", "--tokens-file", tokens]
    refused = subprocess.run(args, capture_output=True, text=True, timeout=30)
    assert refused.returncode != 0 and "chmod 600" in refused.stderr, refused.stderr
    write_tokens(tokens, alice + bob)
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = ""
        deadline = time.time() + 20
        while "streamable HTTP at" not in line and time.time() < deadline:
            line = proc.stderr.readline()
        assert "streamable HTTP at" in line, "the HTTP server never started"
        url = f"http://127.0.0.1:{port_no}/mcp"

        async def as_alice(s):
            names = {t.name for t in (await s.list_tools()).tools}
            assert "find_notes" in names and "read_note" in names, names
            assert not names & {"edit_note", "create_note", "move_note", "research_note"}, names
            found = await s.call_tool("find_notes", {"query": "yeast"})
            assert not found.is_error, text(found)
            paths = [r["path"] for r in found.structured_content["results"]]
            assert paths and all(p.startswith("Microbes/") for p in paths), paths
            outside = await s.call_tool("read_note", {"path": "Kombucha.md"})
            assert outside.is_error and "OUT_OF_SCOPE" in text(outside), text(outside)
            try:
                await s.call_tool("edit_note", {"path": "Microbes/Wild yeast.md", "content": "x"})
                raise AssertionError("a read-only token edited a note")
            except MCPError as e:
                assert "the token `alice` is read-only" in str(e), e

        async def as_bob(s):
            names = [t.name for t in (await s.list_tools()).tools]
            assert names == ["find_notes"], names
            found = await s.call_tool("find_notes", {"query": "kombucha"})
            paths = [r["path"] for r in found.structured_content["results"]]
            assert "Kombucha.md" in paths, paths
            try:
                await s.call_tool("read_note", {"path": "Kombucha.md"})
                raise AssertionError("bob read a note")
            except MCPError as e:
                assert "not offered to the token `bob`" in str(e), e

        await session_for(url, ALICE, as_alice)
        await session_for(url, BOB, as_bob)
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        async with httpx2.AsyncClient() as raw:
            r = await raw.post(url, json=init, headers={**headers, "Authorization": "Bearer not-a-token-of-the-team"})
            assert r.status_code == 401, r.status_code
            r = await raw.post(url, json=init, headers={**headers, "Authorization": f"Bearer {BOB}"})
            assert r.status_code == 200, r.status_code
            # Bob's token revoked: refused on the next request, no restart.
            time.sleep(0.05)
            write_tokens(tokens, alice)
            r = await raw.post(url, json=init, headers={**headers, "Authorization": f"Bearer {BOB}"})
            assert r.status_code == 401, f"revoked token: {r.status_code}"
            r = await raw.post(url, json=init, headers={**headers, "Authorization": f"Bearer {ALICE}"})
            assert r.status_code == 200, r.status_code
        log("tokens: each its own scope, unknown and revoked ones refused, a readable file refused")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            err = ""
    # Requests are logged by the token's name, never the token.
    assert "alice" in err and ALICE not in err and BOB not in err, err[-2000:]
    log("OK")


if __name__ == "__main__":
    asyncio.run(main())
