// The packaged manifest (scholia.vsix's package.json when it exists, else package.json) against
// the server's own list (`scholia lsp --describe`): every palette command maps to a command the
// server has, every code action has a palette command with its title, and the settings and
// environment the extension accepts are exactly the server's.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { LOCAL_COMMANDS, SERVER_COMMANDS, STATUS_COMMAND } from '../src/logic';

const root = path.resolve(__dirname, '..', '..');
const bin = process.env.SCHOLIA_BIN ?? path.resolve(root, '..', '..', 'target', 'debug', 'scholia');
const server = JSON.parse(execFileSync(bin, ['lsp', '--describe'], { encoding: 'utf8' }));

function manifest(): { source: string; pkg: any } { // eslint-disable-line @typescript-eslint/no-explicit-any
  const vsix = path.join(root, 'scholia.vsix');
  if (fs.existsSync(vsix)) {
    const read = 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read("extension/package.json").decode())';
    return { source: 'scholia.vsix', pkg: JSON.parse(execFileSync('python3', ['-c', read, vsix], { encoding: 'utf8' })) };
  }
  return { source: 'package.json', pkg: JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) };
}

const { source, pkg } = manifest();

test(`${source}: every palette command sends a command the server has`, () => {
  const commands: { command: string; title: string }[] = pkg.contributes.commands;
  for (const c of commands) {
    if (LOCAL_COMMANDS.includes(c.command)) continue;
    const target = SERVER_COMMANDS[c.command];
    assert.ok(target, `${c.command}: no server command mapped`);
    assert.ok(server.commands.includes(target), `${c.command} → ${target}: not a server command (${server.commands.join(', ')})`);
  }
  assert.ok(server.commands.includes(STATUS_COMMAND));
  for (const id of Object.keys(SERVER_COMMANDS)) {
    assert.ok(commands.some((c) => c.command === id), `${id}: mapped but not in the manifest`);
  }
});

test(`${source}: every code action of the server is in the palette under its title`, () => {
  const titles = pkg.contributes.commands.map((c: { title: string }) => c.title);
  for (const a of server.code_actions) assert.ok(titles.includes(a.title), `no palette command titled "${a.title}"`);
});

test(`${source}: settings and environment are exactly the server's`, () => {
  const props = pkg.contributes.configuration.properties;
  const settings = props['scholia.settings'].properties;
  const declared: string[] = [];
  for (const [k, v] of Object.entries<any>(settings)) { // eslint-disable-line @typescript-eslint/no-explicit-any
    if (v.properties) for (const sub of Object.keys(v.properties)) declared.push(`${k}.${sub}`);
    else declared.push(k);
  }
  const keys: string[] = server.settings.map((s: { key: string }) => s.key);
  assert.deepEqual([...declared].sort(), [...keys].sort());
  const env: string[] = props['scholia.server.env'].propertyNames.enum;
  const names: string[] = server.env.map((e: { name: string }) => e.name).filter((n: string) => n !== 'SCHOLIA_LOG');
  assert.deepEqual([...env].sort(), [...names].sort());
});

test(`${source}: an untrusted workspace cannot choose the program, its environment or the settings`, () => {
  const untrusted = pkg.capabilities?.untrustedWorkspaces;
  assert.equal(untrusted?.supported, 'limited');
  const restricted: string[] = untrusted.restrictedConfigurations;
  for (const key of ['scholia.server.path', 'scholia.server.env', 'scholia.settings']) {
    assert.ok(restricted.includes(key), `${key} is not restricted`);
    assert.ok(pkg.contributes.configuration.properties[key], `${key} is not a setting`);
  }
});
