// scholia's MCP server driven by the official TypeScript SDK, the client most MCP hosts (and
// the MCP Inspector) are built on. Unlike the Python SDK it validates `structuredContent`
// against each tool's `outputSchema` on every result, errors included: any tool whose answer
// does not match its declared schema fails this test with the SDK's own -32602.
//
// Over stdio and over streamable HTTP (bearer token, lower-case scheme): every tool once with
// good arguments and every error case below, each error readable as `[CODE] message`.
//
// Env: SCHOLIA_BIN, VAULT (a writable copy of the example vault), FAKES (base URL of the
// fakes), GEMINI_CLI (the fake), WORK (a scratch directory), SCHOLIA_DATA_DIR.

import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const { SCHOLIA_BIN: BIN, VAULT, FAKES, WORK } = process.env;
const log = (m) => process.stderr.write(`${m}\n`);
const fail = (m) => {
  throw new Error(m);
};

function serverEnv() {
  return {
    ...process.env,
    SCHOLIA_LLM_BASE_URL: `${FAKES}/v1`,
    SCHOLIA_LLM_MODEL: 'fake',
    SCHOLIA_DUCKDUCKGO_URL: FAKES,
    SCHOLIA_ALLOW_PRIVATE_HOSTS: '1',
    OPENROUTER_API_KEY: 'test-key',
    OPENROUTER_BASE_URL: `${FAKES}/v1`,
    GEMINI_FAKE_SCENARIO: 'valid',
    DEEP_SEARCH_MAX_ITERATIONS: '2',
    GEMINI_API_KEY: 'test-key',
    GEMINI_API_BASE_URL: `${FAKES}/v1beta`,
    SCHOLIA_TASKS_POLL_MS: '50',
  };
}

const text = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

/** Calls a tool; the SDK throws when a result does not validate against the output schema. */
async function call(client, name, args) {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (e) {
    fail(`${name} ${JSON.stringify(args)}: the TypeScript SDK refused the result: ${e.message}`);
  }
}

async function ok(client, name, args) {
  const r = await call(client, name, args);
  if (r.isError) fail(`${name} ${JSON.stringify(args)}: ${text(r)}`);
  if (!r.structuredContent) fail(`${name}: no structured content`);
  return r;
}

// Every error a user can provoke with bad arguments: [tool, args, code, part of the message].
const ERRORS = [
  ['find_notes', {}, 'INVALID_INPUT', 'query: missing'],
  ['find_notes', { query: 'x', limit: 99 }, 'INVALID_INPUT', 'limit: `99` is not valid; valid: an integer from 1 to 50'],
  ['find_notes', { query: 'x', lmit: 1 }, 'INVALID_INPUT', 'lmit: not an argument of find_notes'],
  ['read_note', { path: '../secret.md' }, 'INVALID_PATH', '`..` is not allowed'],
  ['read_note', { path: 'Missing.md' }, 'NOTE_NOT_FOUND', 'no such note'],
  ['read_note', { path: 'Kombucha.md', heading: 'Nope' }, 'HEADING_NOT_FOUND', 'heading: no heading `Nope` in the note'],
  ['edit_note', { path: 'Kombucha.md', heading: 'Kombucha', mode: 'replace', content: 'x' }, 'INVALID_INPUT', 'expected_hash: required to replace'],
  ['edit_note', { path: 'Kombucha.md', heading: 'Kombucha', content: '# Escape' }, 'INVALID_CONTENT', 'would end the section'],
  ['create_note', { path: 'Kombucha.md' }, 'NOTE_EXISTS', 'already exists'],
  ['move_note', { path: 'Kombucha.md', to: 'Sourdough starter.md' }, 'CONFLICT', 'already exists'],
  ['backlinks', { path: 'Missing.md' }, 'NOTE_NOT_FOUND', 'no such note'],
  ['list_notes', { folder: 'Nope' }, 'INVALID_INPUT', 'folder: `Nope` does not exist in the vault'],
  ['list_notes', { limit: 0 }, 'INVALID_INPUT', 'limit: `0` is not valid'],
  ['research_note', { path: 'Missing.md' }, 'NOTE_NOT_FOUND', 'no such note'],
  ['research_note', { path: 'Kombucha.md', depth: 'medium' }, 'INVALID_INPUT', 'depth: `medium` is not valid; valid: shallow, deep'],
  ['deep_search', { query: '  ' }, 'INVALID_INPUT', 'query: empty'],
  ['deep_search', { query: 'q', max_iterations: 51 }, 'INVALID_INPUT', 'max_iterations: `51` is not valid; valid: an integer from 1 to 50'],
  ['deep_search', { query: 'q', note: '../x.md' }, 'INVALID_PATH', 'note `../x.md`: `..` is not allowed'],
  ['search', { query: 'x', model: 'gpt' }, 'INVALID_MODEL', "Invalid model 'gpt'. Valid options: sonar, sonar-pro, sonar-reasoning-pro, sonar-deep-research"],
  ['search', { query: 'x', timeout: 1000 }, 'INVALID_TIMEOUT', 'timeout: `1000` is not valid'],
  ['search', {}, 'INVALID_QUERY', 'query: empty'],
  ['fetch_page', { url: 'http://169.254.169.254/latest/meta-data' }, 'BLOCKED_ADDRESS', 'refused'],
  ['fetch_page', { url: 'ftp://example.com/x' }, 'INVALID_URL', 'only http and https'],
  ['start_deep_research', { query: 'q', max_wait_hours: 0 }, 'INVALID_INPUT', 'max_wait_hours: `0` is not valid'],
  ['start_deep_research', { kind: 'bard', query: 'q' }, 'INVALID_INPUT', 'kind: `bard` is not valid; valid: gemini, deep-search, research-note'],
  ['start_deep_research', { query: '', note: 'Missing.md' }, 'NOTE_NOT_FOUND', 'note `Missing.md`: no such note'],
  ['check_research_status', { task_id: 'no-such-task' }, 'UNKNOWN_TASK', 'no task `no-such-task`'],
  ['get_research_results', { task_id: 'no-such-task' }, 'UNKNOWN_TASK', 'no task'],
  ['cancel_research', {}, 'INVALID_INPUT', 'task_id: missing'],
  ['estimate_research_cost', { query: '' }, 'INVALID_INPUT', 'query'],
  ['save_research_to_markdown', { task_id: 't', output_dir: '../../x' }, 'INVALID_PATH', '`..` is not allowed'],
];

async function checkErrors(client) {
  for (const [name, args, code, part] of ERRORS) {
    const r = await call(client, name, args);
    const shown = text(r);
    if (!r.isError) fail(`${name} ${JSON.stringify(args)}: not an error: ${shown}`);
    if (!shown.startsWith(`[${code}] `) || !shown.includes(part)) {
      fail(`${name} ${JSON.stringify(args)}:\n  got  ${shown}\n  want [${code}] …${part}…`);
    }
    if (shown.includes(VAULT)) fail(`${name}: the server's vault path leaked: ${shown}`);
  }
  log(`${ERRORS.length} error results readable through the TypeScript SDK`);
}

async function checkTools(client) {
  const { tools } = await client.listTools();
  if (tools.length !== 17) fail(`17 tools, got ${tools.map((t) => t.name)}`);
  for (const t of tools) {
    if (!t.outputSchema?.properties || Object.keys(t.outputSchema.properties).length === 0) {
      fail(`${t.name}: the output schema says nothing: ${JSON.stringify(t.outputSchema)}`);
    }
    if (t.inputSchema.additionalProperties !== false) fail(`${t.name}: unknown arguments are refused but not declared`);
  }
  const deep = tools.find((t) => t.name === 'deep_search');
  if (deep.inputSchema.properties.max_iterations.minimum !== 1) fail('max_iterations: one truth (1 to 50)');
  const r = await ok(client, 'find_notes', { query: 'carbon dioxide' });
  if (r.structuredContent.results.length === 0) fail('find_notes found nothing');
  await ok(client, 'read_note', { path: 'Kombucha.md' });
  await ok(client, 'list_notes', { folder: 'Journal' });
  await ok(client, 'fetch_page', { url: `${FAKES}/pages/wikipedia/`, max_chars: 500 });
  const s = await ok(client, 'search', { query: 'How does koji grow?' });
  if (!text(s).includes('Search Metadata:')) fail(`search: the text lacks the metadata: ${text(s)}`);
  await ok(client, 'deep_search', { query: 'Why is rye sour?', max_iterations: 1 });
  await ok(client, 'research_note', { path: 'Fermentation temperature.md' });
  log('every vault and research tool answered within its output schema');
}

/** An agent's edit session: outline, edit with the hash, a stale hash refused, a move that
 * rewrites the links to the note (notes named by `tag`, one set per transport). */
async function checkAgents(client, tag) {
  const scratch = `Agent ${tag}/Scratch.md`;
  await ok(client, 'create_note', { path: scratch, content: '# Scratch\n\n## Log\n\nfirst\n' });
  await ok(client, 'create_note', { path: `Agent ${tag}/Linker.md`, content: 'See [[Scratch]] and [[Scratch#Log|the log]].\n' });
  const outline = await ok(client, 'read_note', { path: scratch, outline: true });
  const { hash } = outline.structuredContent;
  if (outline.structuredContent.outline.map((h) => h.heading).join() !== 'Scratch,Log') fail(text(outline));
  const edited = await ok(client, 'edit_note', { path: scratch, heading: 'Log', mode: 'replace', content: 'second', expected_hash: hash });
  if (edited.structuredContent.hash === hash) fail('the hash did not change');
  const stale = await call(client, 'edit_note', { path: scratch, heading: 'Log', mode: 'replace', content: 'third', expected_hash: hash });
  if (!stale.isError || !text(stale).startsWith('[CONFLICT] the note changed since it was read')) fail(`stale hash: ${text(stale)}`);
  const moved = await ok(client, 'move_note', { path: scratch, to: `Agent ${tag}/Renamed ${tag}.md` });
  if (moved.structuredContent.links_rewritten !== 2) fail(text(moved));
  const linker = await ok(client, 'read_note', { path: `Agent ${tag}/Linker.md` });
  if (linker.structuredContent.content !== `See [[Renamed ${tag}]] and [[Renamed ${tag}#Log|the log]].\n`) fail(linker.structuredContent.content);
  const back = await ok(client, 'backlinks', { path: `Agent ${tag}/Renamed ${tag}.md` });
  if (back.structuredContent.notes.length !== 1) fail(text(back));
  log(`${tag}: outline, edit with the hash, a stale hash refused, a move with its links rewritten`);
}

async function checkTasks(client) {
  await ok(client, 'estimate_research_cost', { query: 'How do sourdough starters work?' });
  const started = await ok(client, 'start_deep_research', { query: 'How do sourdough starters work?', model: 'fake:polls=2', enable_notifications: false });
  const id = started.structuredContent.task_id;
  let status;
  for (let i = 0; i < 400; i++) {
    status = (await ok(client, 'check_research_status', { task_id: id })).structuredContent.status;
    if (status === 'completed') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (status !== 'completed') fail(`the task never completed: ${status}`);
  const res = await ok(client, 'get_research_results', { task_id: id });
  if (!res.structuredContent.report.includes('fake deep-research report')) fail(text(res));
  await ok(client, 'save_research_to_markdown', { task_id: id, output_dir: `${process.env.SCHOLIA_DATA_DIR}/reports` });
  const again = await call(client, 'cancel_research', { task_id: id });
  if (!again.isError || !text(again).includes('already completed')) fail(`cancel of a completed task: ${text(again)}`);
  const long = await ok(client, 'start_deep_research', { query: 'A long one', model: 'fake:polls=100000' });
  const cancelled = await ok(client, 'cancel_research', { task_id: long.structuredContent.task_id, save_partial: false });
  if (cancelled.structuredContent.status !== 'cancelled') fail(text(cancelled));
  const none = await call(client, 'get_research_results', { task_id: long.structuredContent.task_id });
  if (!none.isError || !text(none).includes('cancelled, without results')) fail(`results of a cancelled task: ${text(none)}`);
  log('the six task tools answered within their output schemas');
}

async function stdio() {
  const transport = new StdioClientTransport({ command: BIN, args: ['mcp', '--vault', VAULT], env: serverEnv(), stderr: 'ignore' });
  const client = new Client({ name: 'scholia-node-test', version: '1' });
  await client.connect(transport);
  const instructions = client.getInstructions() ?? '';
  for (const t of ['start_deep_research', 'check_research_status', 'get_research_results', 'cancel_research', 'estimate_research_cost', 'save_research_to_markdown']) {
    if (!instructions.includes(t)) fail(`the instructions never mention ${t}`);
  }
  await checkTools(client);
  await checkErrors(client);
  await checkTasks(client);
  await checkAgents(client, 'stdio');
  await client.close();
  log('stdio: OK');
}

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function http() {
  const port = await freePort();
  const token = 't0ken-for-the-node-end-to-end-test';
  const proc = spawn(BIN, ['mcp', '--vault', VAULT, '--http', `127.0.0.1:${port}`, '--token-env', 'SCHOLIA_MCP_TOKEN'], {
    env: { ...serverEnv(), SCHOLIA_MCP_TOKEN: token },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    await new Promise((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => reject(new Error(`the HTTP server never started: ${seen}`)), 20000);
      proc.stderr.on('data', (d) => {
        seen += d;
        if (seen.includes('streamable HTTP at')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    // What a host's OAuth discovery sees: no OAuth here (404), not a 401 that starts a flow.
    const probe = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource`);
    if (probe.status !== 404) fail(`OAuth discovery: ${probe.status}`);
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `bearer ${token}` } } });
    const client = new Client({ name: 'scholia-node-test', version: '1' });
    await client.connect(transport);
    await checkErrors(client);
    await ok(client, 'find_notes', { query: 'koji' });
    await checkAgents(client, 'http');
    await transport.terminateSession();
    await client.close();
    log('streamable HTTP: OK');
  } finally {
    proc.kill('SIGINT');
  }
}

try {
  await stdio();
  await http();
  log('OK');
  process.exit(0);
} catch (e) {
  log(`FAIL: ${e.stack ?? e}`);
  process.exit(1);
}
