// The extension's own logic, free of the `vscode` module so node's test runner can check it.

/** Palette commands and the server command each sends (`scholia lsp --describe` lists those). */
export const SERVER_COMMANDS: Record<string, string> = {
  'scholia.editor.research': 'scholia.research',
  'scholia.editor.researchDeep': 'scholia.research',
  'scholia.editor.deepSearch': 'scholia.deepSearch',
  'scholia.editor.ask': 'scholia.ask',
  'scholia.editor.startDeepResearch': 'scholia.startDeepResearch',
  'scholia.editor.researchNoteTask': 'scholia.tasks',
  'scholia.editor.taskStatus': 'scholia.tasks',
  'scholia.editor.taskResults': 'scholia.tasks',
  'scholia.editor.taskCancel': 'scholia.tasks',
  'scholia.editor.taskList': 'scholia.tasks',
  'scholia.editor.taskSave': 'scholia.tasks',
  'scholia.editor.search': 'scholia.search',
  'scholia.editor.cancel': 'scholia.cancel',
};

/** Palette commands that act on the client only. */
export const LOCAL_COMMANDS = ['scholia.editor.restart'];

/** The status command the status bar polls. */
export const STATUS_COMMAND = 'scholia.status';
// The command the backlinks lens runs; its locations go to the references view.
export const REFERENCES_COMMAND = 'scholia.references';

export const SONAR_TIERS = ['sonar', 'sonar-pro', 'sonar-reasoning-pro', 'sonar-deep-research'];

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'trace'];

export interface ServerChoice {
  command: string;
  source: 'setting' | 'bundled' | 'PATH' | 'cargo';
}

/**
 * Which binary to run: the `scholia.server.path` setting, else the one bundled in the
 * extension, else `scholia` on PATH, else where `cargo install` puts it (`cargoInstalled`:
 * `$CARGO_HOME/bin/scholia` when it exists; a VS Code started from a desktop launcher often
 * lacks `~/.cargo/bin` on its PATH).
 */
export function resolveServer(
  configured: string,
  bundled: string | undefined,
  onPath: (name: string) => string | undefined,
  cargoInstalled?: string,
): ServerChoice {
  if (configured.trim() !== '') return { command: configured.trim(), source: 'setting' };
  if (bundled) return { command: bundled, source: 'bundled' };
  const found = onPath(process.platform === 'win32' ? 'scholia.exe' : 'scholia');
  if (found) return { command: found, source: 'PATH' };
  if (cargoInstalled) return { command: cargoInstalled, source: 'cargo' };
  throw new Error(
    'scholia.server.path: empty, no bundled server, no `scholia` on PATH or in ~/.cargo/bin; install it (cargo install --locked --path /path/to/scholia) or set the path',
  );
}

/**
 * What the user is told when the server cannot start: the real reason (a spawn error's code
 * and path, which VS Code's client rejects with as a plain object — "scholia: undefined"
 * otherwise), the binary and where it came from, and what to do.
 */
export function startError(e: unknown, server: ServerChoice): string {
  const err = e as { message?: unknown; code?: unknown; path?: unknown } | undefined;
  const reason =
    typeof err?.code === 'string' && err.code === 'ENOENT'
      ? `\`${server.command}\` does not exist`
      : typeof err?.code === 'string' && err.code === 'EACCES'
        ? `\`${server.command}\` is not executable`
        : typeof err?.message === 'string' && err.message !== ''
          ? err.message
          : e === undefined || e === null
            ? 'no reason given'
            : JSON.stringify(e);
  const fix =
    server.source === 'setting'
      ? 'correct scholia.server.path (an absolute path to the scholia binary)'
      : 'install scholia or set scholia.server.path';
  return `the language server did not start: ${reason} (from ${server.source}); ${fix}. The Output panel (scholia) has the details.`;
}

/**
 * The server's environment: this process's, the `scholia.server.env` setting (only variables
 * the server reads) and the log level.
 */
export function serverEnv(
  base: Record<string, string | undefined>,
  extra: Record<string, unknown>,
  allowed: readonly string[],
  logLevel: string,
): Record<string, string> {
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new Error(`scholia.logLevel: \`${logLevel}\` is not valid; valid: ${LOG_LEVELS.join(', ')}`);
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  for (const [k, v] of Object.entries(extra)) {
    if (!allowed.includes(k)) {
      throw new Error(`scholia.server.env: \`${k}\` is not a variable scholia reads; valid: ${allowed.join(', ')}`);
    }
    if (typeof v !== 'string') throw new Error(`scholia.server.env.${k}: must be a string`);
    env[k] = v;
  }
  env.SCHOLIA_LOG = logLevel;
  return env;
}

export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}

export function researchArgs(uri: string, deep: boolean, focus?: string) {
  const args: Record<string, unknown> = { uri, depth: deep ? 'deep' : 'shallow' };
  if (focus && focus.trim() !== '') args.focus = focus.trim();
  return args;
}

export function selectionArgs(uri: string, query: string, range: Range, model?: string) {
  const q = query.trim();
  if (q === '') throw new Error('select the question to research');
  const args: Record<string, unknown> = { uri, query: q, range };
  if (model) args.model = model;
  return args;
}

export interface JobInfo {
  id: number;
  title: string;
  latest?: { message: string; percent?: number } | null;
  elapsed_ms: number;
  cancellable: boolean;
}

/** The status-bar text for the newest cancellable job, or undefined when none runs. */
export function statusText(jobs: JobInfo[]): string | undefined {
  const running = jobs.filter((j) => j.cancellable);
  if (running.length === 0) return undefined;
  const job = running.reduce((a, b) => (b.id > a.id ? b : a));
  let text = `$(sync~spin) scholia: ${job.title}`;
  // Percentage and message from the same snapshot, so one never lags the other.
  if (job.latest?.percent !== undefined && job.latest.percent !== null) text += ` ${job.latest.percent}%`;
  if (job.latest?.message) text += ` — ${job.latest.message.length > 48 ? `${job.latest.message.slice(0, 47)}…` : job.latest.message}`;
  if (running.length > 1) text += ` (+${running.length - 1})`;
  return text;
}

export interface TaskSummary {
  id: string;
  status: string;
  kind: string;
  query: string;
  note?: string | null;
}

export function taskLabel(t: TaskSummary): string {
  return `${t.status} · ${t.kind} · ${t.note ?? t.query}`;
}
