// MCP tasks end to end with the TypeScript packages hosts build on: @modelcontextprotocol/ext-tasks
// (its requester session declares the `io.modelcontextprotocol/tasks` extension) over
// @modelcontextprotocol/client 2.x in the modern era (2026-07-28, per-request framing), against
// `scholia mcp` over stdio. A research_note with a (slow) model answers with a task at once; the
// session polls it to the tool's own result and the note is written. A quick call stays a call.
// The same session on the legacy era (no tasks) gets the plain result. Then the SDK 1.x's
// `client.experimental.tasks` (the older draft: a `task` field in tools/call, tasks/result), to
// record what it does against scholia.
//
// Env: SCHOLIA_BIN, VAULT (a writable copy of the example vault), FAKES, SCHOLIA_DATA_DIR.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
} from '@modelcontextprotocol/ext-tasks/client';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as Stdio1 } from '@modelcontextprotocol/sdk/client/stdio.js';

const { SCHOLIA_BIN: BIN, VAULT, FAKES } = process.env;
const log = (m) => process.stderr.write(`${m}\n`);
const fail = (m) => {
  throw new Error(m);
};

const serverEnv = {
  ...process.env,
  SCHOLIA_LLM_BASE_URL: `${FAKES}/v1`,
  SCHOLIA_LLM_MODEL: 'fake:latency=700',
  SCHOLIA_DUCKDUCKGO_URL: FAKES,
  SCHOLIA_ALLOW_PRIVATE_HOSTS: '1',
  SCHOLIA_TASKS_POLL_MS: '50',
};
const params = { command: BIN, args: ['mcp', '--vault', VAULT], env: serverEnv, stderr: 'ignore' };

/**
 * The raw JSON-RPC path a host gives ext-tasks for the 2026-07-28 task shapes (the SDK client
 * decodes `tools/call` results by method and refuses `resultType: "task"`): requests with ids of
 * their own on the client's transport, their responses taken off before the client sees them.
 */
function rawPath(transport) {
  const pending = new Map();
  let next = 0;
  const clientHandler = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const waiter = typeof message?.id === 'string' ? pending.get(message.id) : undefined;
    if (!waiter) return clientHandler?.(message, extra);
    pending.delete(message.id);
    waiter(message.error ? { kind: 'error', error: message.error } : { kind: 'result', result: message.result });
  };
  return (request) =>
    new Promise((resolve, reject) => {
      const id = `raw-${++next}`;
      pending.set(id, resolve);
      transport.send({ jsonrpc: '2.0', id, method: request.method, params: request.params }).catch(reject);
    });
}

async function modern() {
  const client = new Client({ name: 'scholia-tasks-e2e', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  const transport = new StdioClientTransport(params);
  await client.connect(transport);
  const era = client.getProtocolEra();
  const version = client.getNegotiatedProtocolVersion();
  if (era !== 'modern') fail(`era ${era} (${version}): scholia should speak 2026-07-28`);
  const caps = client.getServerCapabilities();
  if (!caps?.extensions?.['io.modelcontextprotocol/tasks']) fail(`no tasks extension: ${JSON.stringify(caps)}`);
  const rawDispatch = rawPath(transport);
  const session = createTaskSessionFromClient(client, {
    endpointId: 'scholia-e2e',
    rawDispatch,
    v2RequestFraming: {
      protocolVersion: version,
      clientInfo: { name: 'scholia-tasks-e2e', version: '1' },
      clientCapabilities: {},
    },
  });
  try {
    const started = Date.now();
    const execution = await session.callTool('research_note', { path: 'Kombucha.md' });
    const handed = Date.now() - started;
    const { outcome } = await execution.settle();
    const result = resultFromTaskOutcome(outcome);
    log(`research_note: handed back in ${handed} ms, settled in ${Date.now() - started} ms as ${outcome.kind ?? outcome.status ?? '?'}`);
    if (handed > 5000) fail(`the task took ${handed} ms to come back`);
    if (result.isError) fail(`research_note: ${JSON.stringify(result)}`);
    if (result.structuredContent?.path !== 'Kombucha.md') fail(`not the tool's result: ${JSON.stringify(result)}`);
    if (!readFileSync(join(VAULT, 'Kombucha.md'), 'utf8').includes('## Research')) fail('the note was not written');
    const quick = await session.callTool('find_notes', { query: 'kombucha' });
    const q = resultFromTaskOutcome((await quick.settle()).outcome);
    if (!q.structuredContent?.results?.length) fail(`find_notes: ${JSON.stringify(q)}`);
  } finally {
    await session.close();
    await client.close();
  }
}

async function legacy() {
  const client = new Client({ name: 'scholia-tasks-e2e', version: '1' }, { versionNegotiation: { mode: 'legacy' } });
  await client.connect(new StdioClientTransport(params));
  const session = createTaskSessionFromClient(client, { endpointId: 'scholia-e2e-legacy' });
  try {
    const execution = await session.callTool('find_notes', { query: 'kombucha' });
    const result = resultFromTaskOutcome((await execution.settle()).outcome);
    if (!result.structuredContent?.results?.length) fail(`legacy find_notes: ${JSON.stringify(result)}`);
    log(`legacy era (${client.getNegotiatedProtocolVersion()}): plain results, no tasks`);
  } finally {
    await session.close();
    await client.close();
  }
}

// The SDK 1.x's experimental tasks: what it does against scholia, recorded (not required).
async function sdk1() {
  const client = new Client1({ name: 'scholia-tasks-e2e', version: '1' }, { capabilities: { tasks: {} } });
  await client.connect(new Stdio1(params));
  const tasks = client.experimental?.tasks;
  if (!tasks?.callToolStream) {
    log('SDK 1.x: no client.experimental.tasks');
    await client.close();
    return;
  }
  const kinds = [];
  try {
    for await (const message of tasks.callToolStream({ name: 'find_notes', arguments: { query: 'kombucha' } }, undefined, { task: { ttl: 60000 } })) {
      kinds.push(message.type === 'error' ? `error (${message.error?.message ?? JSON.stringify(message.error)})` : message.type);
      if (message.type === 'result' && !message.result?.structuredContent) fail(`SDK 1.x result: ${JSON.stringify(message)}`);
    }
    log(`SDK 1.x experimental tasks (the 2025-11-25 draft): ${kinds.join(' → ')}`);
  } catch (e) {
    log(`SDK 1.x experimental tasks: ${e.message}`);
  } finally {
    await client.close();
  }
}

await modern();
await legacy();
await sdk1();
log('OK');
