import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { researchArgs, resolveServer, selectionArgs, serverEnv, startError, statusText } from '../src/logic';

test('the server binary: setting, then bundled, then PATH, else a clear error', () => {
  const cases: [string, string | undefined, string | undefined, string][] = [
    ['/opt/scholia', '/ext/server/scholia', '/usr/bin/scholia', 'setting:/opt/scholia'],
    ['  ', '/ext/server/scholia', '/usr/bin/scholia', 'bundled:/ext/server/scholia'],
    ['', undefined, '/usr/bin/scholia', 'PATH:/usr/bin/scholia'],
  ];
  for (const [configured, bundled, onPath, want] of cases) {
    const s = resolveServer(configured, bundled, () => onPath);
    assert.equal(`${s.source}:${s.command}`, want);
  }
  // Not on PATH (a desktop launcher's), but where `cargo install` put it.
  const cargo = resolveServer('', undefined, () => undefined, '/home/u/.cargo/bin/scholia');
  assert.equal(`${cargo.source}:${cargo.command}`, 'cargo:/home/u/.cargo/bin/scholia');
  assert.throws(() => resolveServer('', undefined, () => undefined), /scholia\.server\.path: empty/);
});

test('the server environment: only variables scholia reads, and the log level', () => {
  const env = serverEnv({ PATH: '/bin', UNSET: undefined }, { OPENROUTER_API_KEY: 'k' }, ['OPENROUTER_API_KEY'], 'debug');
  assert.deepEqual(env, { PATH: '/bin', OPENROUTER_API_KEY: 'k', SCHOLIA_LOG: 'debug' });
  assert.throws(() => serverEnv({}, { OPENROUTER_KEY: 'k' }, ['OPENROUTER_API_KEY'], 'info'), /scholia\.server\.env: `OPENROUTER_KEY` is not a variable scholia reads; valid: OPENROUTER_API_KEY/);
  assert.throws(() => serverEnv({}, {}, [], 'loud'), /scholia\.logLevel: `loud` is not valid; valid: error, warn, info, debug, trace/);
  assert.throws(() => serverEnv({}, { A: 1 }, ['A'], 'info'), /scholia\.server\.env\.A: must be a string/);
});

test('command arguments have the shapes the server takes', () => {
  assert.deepEqual(researchArgs('file:///v/n.md', true, '  koji '), { uri: 'file:///v/n.md', depth: 'deep', focus: 'koji' });
  assert.deepEqual(researchArgs('file:///v/n.md', false, ''), { uri: 'file:///v/n.md', depth: 'shallow' });
  const range = { start: { line: 1, character: 0 }, end: { line: 1, character: 5 } };
  assert.deepEqual(selectionArgs('u', ' Why? ', range, 'sonar-pro'), { uri: 'u', query: 'Why?', range, model: 'sonar-pro' });
  assert.throws(() => selectionArgs('u', '  ', range), /select the question/);
});

test('the status bar shows the newest cancellable job', () => {
  assert.equal(statusText([]), undefined);
  assert.equal(statusText([{ id: 1, title: 'Indexing vault', elapsed_ms: 5, cancellable: false }]), undefined);
  assert.equal(
    statusText([
      { id: 2, title: 'Research this note', latest: { message: 'x', percent: 40 }, elapsed_ms: 5, cancellable: true },
      { id: 3, title: 'Deep search selection', latest: null, elapsed_ms: 5, cancellable: true },
    ]),
    '$(sync~spin) scholia: Deep search selection (+1)',
  );
  assert.equal(
    statusText([{ id: 2, title: 'Research this note', latest: { message: 'x', percent: 40 }, elapsed_ms: 5, cancellable: true }]),
    '$(sync~spin) scholia: Research this note 40% — x',
  );
});

test('a server that does not start says why, never "undefined"', () => {
  const setting = { command: '/opt/nope/scholia', source: 'setting' as const };
  const spawn = { code: 'ENOENT', errno: -2, syscall: 'spawn /opt/nope/scholia', path: '/opt/nope/scholia' };
  const said = startError(spawn, setting);
  assert.match(said, /`\/opt\/nope\/scholia` does not exist \(from setting\); correct scholia\.server\.path/);
  assert.doesNotMatch(said, /undefined/);
  assert.match(startError({ code: 'EACCES' }, setting), /is not executable/);
  assert.match(startError(new Error('Connection to server got closed'), { command: 'scholia', source: 'PATH' }), /Connection to server got closed \(from PATH\); install scholia/);
  assert.match(startError(undefined, setting), /did not start: no reason given/);
});
