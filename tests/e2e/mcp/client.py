"""End to end with a real MCP client (the MCP Python SDK) against `scholia mcp`.

Over stdio: lists the tools and checks their schemas, calls every tool against the loopback
fakes, receives progress, cancels a long deep_search (the fake Gemini CLI process is gone, the
note unchanged), reads resources, and checks error results. Over streamable HTTP: a bearer
token is required, a foreign Origin is refused, and the same tools work.

Env: SCHOLIA_BIN, VAULT (a writable copy of the example vault), FAKES (base URL of the fakes),
GEMINI_CLI (the fake), WORK (a scratch directory). Exits non-zero on the first failure.
"""

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

BIN = os.environ["SCHOLIA_BIN"]
VAULT = os.environ["VAULT"]
FAKES = os.environ["FAKES"]
WORK = os.environ["WORK"]
GEMINI_LOG = os.path.join(WORK, "gemini.jsonl")

TOOLS = {"find_notes", "read_note", "list_notes", "backlinks", "edit_note", "create_note", "move_note",
         "research_note", "deep_search", "search", "fetch_page",
         "start_deep_research", "check_research_status", "get_research_results", "cancel_research",
         "estimate_research_cost", "save_research_to_markdown"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def server_env():
    env = dict(os.environ)
    env.update({
        "SCHOLIA_LLM_BASE_URL": f"{FAKES}/v1",
        "SCHOLIA_LLM_MODEL": "fake",
        "SCHOLIA_DUCKDUCKGO_URL": FAKES,
        "SCHOLIA_ALLOW_PRIVATE_HOSTS": "1",
        "OPENROUTER_API_KEY": "test-key",
        "OPENROUTER_BASE_URL": f"{FAKES}/v1",
        "GEMINI_FAKE_SCENARIO": "valid",
        "GEMINI_FAKE_LOG": GEMINI_LOG,
        "DEEP_SEARCH_MAX_ITERATIONS": "3",
        "GEMINI_API_KEY": "test-key",
        "GEMINI_API_BASE_URL": f"{FAKES}/v1beta",
        "SCHOLIA_TASKS_POLL_MS": "50",
    })
    return env


def read(rel):
    with open(os.path.join(VAULT, rel), encoding="utf-8") as f:
        return f.read()


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def text(result):
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


async def check_tools(s):
    listed = (await s.list_tools()).tools
    names = {t.name for t in listed}
    assert names == TOOLS, names
    by = {t.name: t for t in listed}
    for t in listed:
        assert t.description and len(t.description) > 60, t.name
        assert t.input_schema["type"] == "object", t.name
        assert t.output_schema and t.output_schema["type"] == "object", t.name
        for field, spec in t.input_schema.get("properties", {}).items():
            assert spec.get("description") or spec.get("enum"), f"{t.name}.{field} has no description"
    for name in ("find_notes", "read_note", "list_notes"):
        assert by[name].annotations.read_only_hint is True, name
        assert by[name].annotations.open_world_hint is False, name
    assert by["research_note"].annotations.read_only_hint is False
    assert by["research_note"].annotations.destructive_hint is False
    for name in ("research_note", "deep_search", "search", "fetch_page"):
        assert by[name].annotations.open_world_hint is True, name
    assert by["find_notes"].input_schema["properties"]["limit"]["maximum"] == 50
    assert by["research_note"].input_schema["properties"]["depth"]["enum"] == ["shallow", "deep"]
    assert by["search"].input_schema["properties"]["model"]["enum"] == [
        "sonar", "sonar-pro", "sonar-reasoning-pro", "sonar-deep-research"]
    assert by["research_note"].input_schema["required"] == ["path"]
    log(f"tools: {sorted(names)}")


async def check_vault_tools(s):
    r = await s.call_tool("find_notes", {"query": "wild yeast", "limit": 3})
    assert not r.is_error, text(r)
    hits = r.structured_content["results"]
    assert hits and hits[0]["path"] == "Microbes/Wild yeast.md", hits
    r = await s.call_tool("read_note", {"path": "Microbes/Wild yeast.md", "heading": "Carbon dioxide"})
    assert not r.is_error, text(r)
    assert r.structured_content["heading"] == "Carbon dioxide"
    assert r.structured_content["content"].startswith("## Carbon dioxide"), r.structured_content
    r = await s.call_tool("list_notes", {"folder": "Microbes"})
    paths = [n["path"] for n in r.structured_content["notes"]]
    assert paths == ["Microbes/Lactic acid bacteria.md", "Microbes/Wild yeast.md"], paths
    r = await s.call_tool("list_notes", {"limit": 2})
    assert r.structured_content["next_offset"] == 2 and r.structured_content["total"] == 7, r.structured_content
    r = await s.call_tool("fetch_page", {"url": f"{FAKES}/pages/wikipedia/", "max_chars": 500})
    assert not r.is_error, text(r)
    assert r.structured_content["title"] == "Mozilla - Wikipedia", r.structured_content["title"]
    assert r.structured_content["truncated"] is True
    log("vault tools and fetch_page answered")


async def check_agents(s, tag):
    """An agent's edit session: outline, edit with the hash, a stale hash refused, a move that
    rewrites the links (notes named by `tag`, one set per transport)."""
    folder = f"Agent {tag}"
    r = await s.call_tool("create_note", {"path": f"{folder}/Scratch.md", "content": "# Scratch\n\n## Log\n\nfirst\n"})
    assert not r.is_error, text(r)
    r = await s.call_tool("create_note", {"path": f"{folder}/Linker.md", "content": "See [[Scratch]] and ![[Scratch#Log]].\n"})
    assert not r.is_error, text(r)
    r = await s.call_tool("read_note", {"path": f"{folder}/Scratch.md", "outline": True})
    assert [h["heading"] for h in r.structured_content["outline"]] == ["Scratch", "Log"], r.structured_content
    h = r.structured_content["hash"]
    r = await s.call_tool("edit_note", {"path": f"{folder}/Scratch.md", "heading": "log", "mode": "replace",
                                        "content": "second", "expected_hash": h})
    assert not r.is_error and r.structured_content["written"] is True, text(r)
    assert read(f"{folder}/Scratch.md") == "# Scratch\n\n## Log\n\nsecond\n", read(f"{folder}/Scratch.md")
    r = await s.call_tool("edit_note", {"path": f"{folder}/Scratch.md", "heading": "Log", "mode": "replace",
                                        "content": "third", "expected_hash": h})
    assert r.is_error and text(r).startswith("[CONFLICT] the note changed since it was read"), text(r)
    assert "third" not in read(f"{folder}/Scratch.md")
    r = await s.call_tool("move_note", {"path": f"{folder}/Scratch.md", "to": f"{folder}/Done {tag}.md"})
    assert not r.is_error and r.structured_content["links_rewritten"] == 2, text(r)
    assert read(f"{folder}/Linker.md") == f"See [[Done {tag}]] and ![[Done {tag}#Log]].\n", read(f"{folder}/Linker.md")
    r = await s.call_tool("backlinks", {"path": f"{folder}/Done {tag}.md"})
    assert [n["path"] for n in r.structured_content["notes"]] == [f"{folder}/Linker.md"], r.structured_content
    # Leave the vault as the other checks expect it.
    for name in (f"Done {tag}.md", "Linker.md"):
        os.remove(os.path.join(VAULT, folder, name))
    os.rmdir(os.path.join(VAULT, folder))
    log(f"{tag}: outline, edit with the hash, a stale hash refused, a move with its links rewritten")


async def check_resources(s):
    listed = await s.list_resources()
    uris = [r.uri for r in listed.resources]
    assert "note:///Kombucha.md" in [str(u) for u in uris], uris
    assert any(str(u) == "note:///Journal/Bread%20log.md" for u in uris), uris
    got = await s.read_resource("note:///Journal/Bread%20log.md")
    assert got.contents[0].text.startswith("# Bread log"), got.contents[0].text[:80]
    templates = await s.list_resource_templates()
    assert templates.resource_templates[0].uri_template == "note:///{path}"
    log("resources listed and read")


async def check_research(s):
    before = read("Kombucha.md")
    progress = []

    async def on_progress(p, total, message):
        progress.append((p, total, message))

    r = await s.call_tool("research_note", {"path": "Kombucha.md"}, progress_callback=on_progress)
    assert not r.is_error, text(r)
    sc = r.structured_content
    assert sc["written"] is True and sc["topics_researched"] >= 1, sc
    assert sc["path"] == "Kombucha.md" and len(sc["preview"]) <= 500
    assert "section" not in sc, "the section stays in the note"
    assert len(progress) >= 3, progress
    assert all(b[0] > a[0] for a, b in zip(progress, progress[1:])), "progress rises"
    assert all(t == 100 for _, t, _ in progress)
    after = read("Kombucha.md")
    assert after.startswith(before.rstrip("\n")), "the note's text is kept"
    assert "\n## Research\n" in after
    r = await s.call_tool("read_note", {"path": "Kombucha.md", "heading": "Research"})
    assert r.structured_content["content"].startswith("## Research"), r.structured_content["content"][:80]
    log(f"research_note wrote the note with {len(progress)} progress notifications")


async def check_questions(s):
    r = await s.call_tool("deep_search", {"query": "what is koji?"})
    assert not r.is_error, text(r)
    sc = r.structured_content
    assert sc["success"] is True and sc["verified"] is True, sc
    assert sc["metadata"]["iterations"] == 2 and sc["metadata"]["sources_visited"], sc["metadata"]
    r = await s.call_tool("deep_search", {"query": "how long does koji grow?", "note": "Kombucha.md"})
    assert not r.is_error, text(r)
    assert r.structured_content["written_to"]["path"] == "Kombucha.md"
    assert "### how long does koji grow?" in read("Kombucha.md")
    r = await s.call_tool("search", {"query": "what is kefir?", "model": "sonar-pro"})
    assert not r.is_error, text(r)
    meta = r.structured_content["metadata"]
    assert meta["model"] == "sonar-pro" and meta["costTier"] == "premium" and meta["timeout"] == 60000, meta
    assert r.structured_content["sources"], r.structured_content
    log("deep_search and search answered")


async def check_errors(s):
    async def error_of(tool, args):
        r = await s.call_tool(tool, args)
        assert r.is_error, f"{tool} {args}: {text(r)}"
        return text(r)

    assert "limit: `99` is not valid; valid: an integer from 1 to 50" in await error_of("find_notes", {"query": "x", "limit": 99})
    assert "query: missing" in await error_of("find_notes", {})
    assert "depth: `medium` is not valid; valid: shallow, deep" in await error_of(
        "research_note", {"path": "Kombucha.md", "depth": "medium"})
    assert "Invalid model 'gpt'. Valid options: sonar, sonar-pro, sonar-reasoning-pro, sonar-deep-research" in await error_of(
        "search", {"query": "x", "model": "gpt"})
    assert "timeout: `1000` is not valid" in await error_of("search", {"query": "x", "timeout": 1000})
    assert "`..` is not allowed" in await error_of("read_note", {"path": "../secret.md"})
    assert "no such note" in await error_of("read_note", {"path": "Missing.md"})
    assert "lmit: not an argument of find_notes" in await error_of("find_notes", {"query": "x", "lmit": 1})
    r = await s.call_tool("deep_search", {"query": "  "})
    assert r.is_error and r.structured_content is None, r
    assert text(r) == "[INVALID_INPUT] query: empty; give the question to research", r
    assert "refused" in await error_of("fetch_page", {"url": "http://169.254.169.254/latest/meta-data"})
    try:
        await s.call_tool("frobnicate", {})
        raise AssertionError("an unknown tool is a protocol error")
    except MCPError as e:
        assert "does not exist" in str(e), e
    log("errors are tool results naming the field")


async def check_cancel(s):
    before = read("Sourdough starter.md")
    started = []

    async def on_progress(p, total, message):
        started.append(message)

    async def run():
        await s.call_tool(
            "deep_search",
            {"query": "koji fake-scenario:hang", "note": "Sourdough starter.md"},
            progress_callback=on_progress,
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        deadline = time.time() + 20
        pid = None
        while time.time() < deadline and pid is None:
            await anyio.sleep(0.05)
            if os.path.exists(GEMINI_LOG):
                for line in open(GEMINI_LOG):
                    call = json.loads(line)
                    if "fake-scenario:hang" in call["stdin"]:
                        pid = call["pid"]
        assert pid, "the fake Gemini CLI never started"
        assert alive(pid)
        assert any("round 1" in m for m in started), started
        tg.cancel_scope.cancel()
    deadline = time.time() + 10
    while alive(pid) and time.time() < deadline:
        await anyio.sleep(0.05)
    assert not alive(pid), "the Gemini CLI outlived the cancelled request"
    await anyio.sleep(0.3)
    assert read("Sourdough starter.md") == before, "the cancelled run changed the note"
    log("a cancelled deep_search stopped the Gemini CLI and left the note alone")


async def check_background_research(s):
    """Seed 001 through a real client: estimate, start, poll, results, save, cancel."""
    est = await s.call_tool("estimate_research_cost", {"query": "How do sourdough starters work?"})
    assert not est.is_error and est.structured_content["query_complexity"] in ("simple", "medium", "complex")
    started = await s.call_tool("start_deep_research", {"query": "How do sourdough starters work?", "model": "fake:polls=3", "enable_notifications": False})
    assert not started.is_error, text(started)
    task_id = started.structured_content["task_id"]
    assert started.structured_content["status"] == "running_async"
    early = await s.call_tool("get_research_results", {"task_id": task_id})
    status = None
    # Up to 30 s: the whole test suite may be running beside this server.
    for _ in range(600):
        st = await s.call_tool("check_research_status", {"task_id": task_id})
        status = st.structured_content["status"]
        if status == "completed":
            break
        await anyio.sleep(0.05)
    assert status == "completed", status
    assert early.is_error or early.structured_content.get("report"), text(early)
    res = await s.call_tool("get_research_results", {"task_id": task_id})
    assert "fake deep-research report" in res.structured_content["report"], text(res)
    assert len(res.structured_content["sources"]) == 2
    data_reports = os.path.join(os.environ["SCHOLIA_DATA_DIR"], "reports")
    saved = await s.call_tool("save_research_to_markdown", {"task_id": task_id, "output_dir": data_reports})
    assert not saved.is_error, text(saved)
    assert os.path.isfile(saved.structured_content["file_path"])
    # Only inside the vault or the data directory: a folder elsewhere is refused.
    outside = await s.call_tool("save_research_to_markdown", {"task_id": task_id, "output_dir": os.path.join(WORK, "reports")})
    assert outside.is_error and "outside the vault" in text(outside), text(outside)
    long = await s.call_tool("start_deep_research", {"query": "A long one", "model": "fake:polls=100000"})
    cancelled = await s.call_tool("cancel_research", {"task_id": long.structured_content["task_id"]})
    assert not cancelled.is_error and cancelled.structured_content["status"] == "cancelled", text(cancelled)
    again = await s.call_tool("cancel_research", {"task_id": long.structured_content["task_id"]})
    assert again.is_error and "already cancelled" in text(again), text(again)
    unknown = await s.call_tool("check_research_status", {"task_id": "nope"})
    assert unknown.is_error and "no task" in text(unknown), text(unknown)
    # research-note: deep research of a note in the background, written into the note on disk.
    bad = await s.call_tool("start_deep_research", {"query": "", "kind": "research-note", "note": "../escape.md"})
    assert bad.is_error, text(bad)
    missing = await s.call_tool("start_deep_research", {"query": "", "kind": "research-note"})
    assert missing.is_error and "note: missing" in text(missing), text(missing)
    note_task = await s.call_tool("start_deep_research", {"query": "", "kind": "research-note", "note": "Kombucha.md", "enable_notifications": False})
    assert not note_task.is_error, text(note_task)
    status = None
    for _ in range(1200):
        st = await s.call_tool("check_research_status", {"task_id": note_task.structured_content["task_id"]})
        status = st.structured_content["status"]
        if status in ("completed", "failed"):
            break
        await anyio.sleep(0.05)
    assert status == "completed", st.structured_content
    with open(os.path.join(VAULT, "Kombucha.md"), encoding="utf-8") as f:
        assert "\n## Research\n" in f.read()
    log("background research: started, polled, saved and cancelled a task; a research-note task wrote its note")


async def stdio_suite():
    params = StdioServerParameters(command=BIN, args=["mcp", "--vault", VAULT], env=server_env())
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            init = await s.initialize()
            assert init.server_info.name == "scholia", init.server_info
            assert init.server_info.version, init.server_info
            assert "find_notes" in init.instructions and "sonar-deep-research" in init.instructions
            await check_tools(s)
            await check_vault_tools(s)
            await check_agents(s, "stdio")
            await check_resources(s)
            await check_errors(s)
            await check_research(s)
            await check_questions(s)
            await check_cancel(s)
            await check_background_research(s)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def http_suite():
    port = free_port()
    token = "t0ken-for-the-end-to-end-test"
    env = server_env()
    env["SCHOLIA_MCP_TOKEN"] = token
    proc = subprocess.Popen(
        [BIN, "mcp", "--vault", VAULT, "--http", f"127.0.0.1:{port}", "--token-env", "SCHOLIA_MCP_TOKEN"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = ""
        deadline = time.time() + 20
        while "streamable HTTP at" not in line and time.time() < deadline:
            line = proc.stderr.readline()
        assert "streamable HTTP at" in line, "the HTTP server never started"
        url = f"http://127.0.0.1:{port}/mcp"
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        async with httpx2.AsyncClient() as raw:
            r = await raw.post(url, json=init, headers=headers)
            assert r.status_code == 401, f"no token: {r.status_code}"
            assert r.headers.get("www-authenticate") == "Bearer"
            # A refusal ends its connection and says so: the next request opens a new one
            # instead of racing the server's close on the kept-alive one.
            assert r.headers.get("connection") == "close", r.headers
            r = await raw.post(url, json=init, headers={**headers, "Authorization": "Bearer wrong-token-of-the-same-size"})
            assert r.status_code == 401, f"wrong token: {r.status_code}"
            r = await raw.post(url, json=init, headers={**headers, "Authorization": f"Bearer {token}", "Origin": "http://evil.example"})
            assert r.status_code == 403, f"foreign origin: {r.status_code}"
            assert r.headers.get("connection") == "close", r.headers
            # The scheme is case-insensitive (RFC 7235).
            r = await raw.post(url, json=init, headers={**headers, "Authorization": f"bearer {token}"})
            assert r.status_code == 200, f"lower-case scheme: {r.status_code} {r.text}"
            # No OAuth here: a probe learns so (404), instead of starting an OAuth flow on a 401.
            for probe in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
                          "/.well-known/oauth-authorization-server"):
                r = await raw.get(f"http://127.0.0.1:{port}{probe}")
                assert r.status_code == 404, f"{probe}: {r.status_code}"
            auth = {**headers, "Authorization": f"Bearer {token}", "MCP-Protocol-Version": "2025-06-18"}
            r = await raw.delete(url, headers={**auth, "Mcp-Session-Id": "no-such-session"})
            assert r.status_code == 404, f"DELETE of an unknown session: {r.status_code}"
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with client:
            async with streamable_http_client(url, http_client=client) as (r, w, *_):
                async with ClientSession(r, w) as s:
                    init = await s.initialize()
                    assert init.server_info.name == "scholia"
                    await check_tools(s)
                    await check_vault_tools(s)
                    await check_agents(s, "http")
                    await check_resources(s)
                    progress = []

                    async def on_progress(p, total, message):
                        progress.append(p)

                    res = await s.call_tool("research_note", {"path": "Fermentation temperature.md"}, progress_callback=on_progress)
                    assert not res.is_error, text(res)
                    assert progress, "progress over HTTP"
        log("streamable HTTP: token and Origin enforced, tools and progress work")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


async def main():
    await stdio_suite()
    await http_suite()
    log("OK")


if __name__ == "__main__":
    asyncio.run(main())
