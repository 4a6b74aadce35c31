// The scholia VS Code extension: starts `scholia lsp` for Markdown with vscode-languageclient
// and mirrors the Neovim plugin's commands in the palette. Progress of every job comes through
// the language client's work-done UI (cancellable there); the status bar shows the newest job.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import { JobInfo, REFERENCES_COMMAND, SONAR_TIERS, STATUS_COMMAND, TaskSummary, resolveServer, researchArgs, selectionArgs, serverEnv, startError, statusText, taskLabel } from './logic';

let client: LanguageClient | undefined;
let statusItem: vscode.StatusBarItem;
let polling: NodeJS.Timeout | undefined;
let lastTask: string | undefined;

function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, name);
    if (dir && fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

async function startClient(context: vscode.ExtensionContext, output: vscode.OutputChannel): Promise<void> {
  const config = vscode.workspace.getConfiguration('scholia');
  const bundledPath = context.asAbsolutePath(path.join('server', process.platform === 'win32' ? 'scholia.exe' : 'scholia'));
  const cargoPath = path.join(process.env.CARGO_HOME ?? path.join(os.homedir(), '.cargo'), 'bin', process.platform === 'win32' ? 'scholia.exe' : 'scholia');
  const server = resolveServer(
    config.get<string>('server.path', ''),
    fs.existsSync(bundledPath) ? bundledPath : undefined,
    which,
    fs.existsSync(cargoPath) ? cargoPath : undefined,
  );
  const described = JSON.parse((await run(server.command, ['lsp', '--describe'])) || '{}');
  const allowed: string[] = (described.env ?? []).map((e: { name: string }) => e.name);
  const env = serverEnv(process.env, config.get<Record<string, unknown>>('server.env', {}), allowed, config.get<string>('logLevel', 'info'));
  output.appendLine(`scholia: ${server.command} (${server.source})`);
  const serverOptions: ServerOptions = { command: server.command, args: ['lsp'], options: { env } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', language: 'markdown' }],
    initializationOptions: config.get<Record<string, unknown>>('settings', {}),
    outputChannel: output,
    middleware: {
      // The backlinks lens on a note's title runs `scholia.references`; its locations open in
      // VS Code's references view.
      executeCommand: async (command, args, next) => {
        const result: unknown = await next(command, args);
        const at = args[0] as { uri?: string; position?: { line: number; character: number } } | undefined;
        if (command === REFERENCES_COMMAND && Array.isArray(result) && client && at?.uri && at.position) {
          const locations = await Promise.all(result.map((l) => client!.protocol2CodeConverter.asLocation(l)));
          await vscode.commands.executeCommand(
            'editor.action.showReferences',
            vscode.Uri.parse(at.uri),
            new vscode.Position(at.position.line, at.position.character),
            locations,
          );
        }
        return result;
      },
    },
  };
  if (path.isAbsolute(server.command) && !fs.existsSync(server.command)) {
    throw new Error(startError(Object.assign(new Error('missing'), { code: 'ENOENT' }), server));
  }
  client = new LanguageClient('scholia', 'scholia', serverOptions, clientOptions);
  try {
    await client.start();
  } catch (e) {
    client = undefined;
    throw new Error(startError(e, server));
  }
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { execFile } = require('node:child_process') as typeof import('node:child_process');
    execFile(command, args, { timeout: 10000 }, (err, stdout) => resolve(err ? '' : stdout));
  });
}

async function exec<T>(command: string, args?: unknown): Promise<T | undefined> {
  if (!client) {
    void vscode.window.showErrorMessage('scholia: the language server is not running');
    return undefined;
  }
  try {
    const result = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args === undefined ? [] : [args] });
    watchJobs();
    return result as T;
  } catch (e) {
    void vscode.window.showErrorMessage(`scholia: ${(e as Error).message}`);
    return undefined;
  }
}

function editorNote(): { editor: vscode.TextEditor; uri: string } | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'markdown' || !client) {
    void vscode.window.showErrorMessage('scholia: open a Markdown note of the vault first');
    return undefined;
  }
  return { editor, uri: client.code2ProtocolConverter.asUri(editor.document.uri) };
}

function selected(editor: vscode.TextEditor) {
  const sel = editor.selection.isEmpty ? editor.document.lineAt(editor.selection.active.line).range : editor.selection;
  return { text: editor.document.getText(sel), range: client!.code2ProtocolConverter.asRange(sel) };
}

/** Polls the server's jobs while any runs, for the status-bar item. */
function watchJobs() {
  if (polling) return;
  const tick = async () => {
    const status = client ? await client.sendRequest(ExecuteCommandRequest.type, { command: STATUS_COMMAND, arguments: [] }).catch(() => undefined) : undefined;
    const text = statusText(((status as { jobs?: JobInfo[] })?.jobs) ?? []);
    if (text) {
      statusItem.text = text;
      statusItem.show();
    } else {
      statusItem.hide();
      clearInterval(polling);
      polling = undefined;
    }
  };
  polling = setInterval(() => void tick(), 300);
  void tick();
}

async function pickTask(prompt: string): Promise<string | undefined> {
  const list = await exec<{ tasks: TaskSummary[] }>('scholia.tasks', { action: 'list' });
  if (!list) return undefined;
  if (list.tasks.length === 0) {
    void vscode.window.showInformationMessage('scholia: no background tasks');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    list.tasks.map((t) => ({ label: taskLabel(t), description: t.id, id: t.id, picked: t.id === lastTask })),
    { placeHolder: prompt },
  );
  return picked?.id;
}

export async function activate(context: vscode.ExtensionContext) {
  const output = vscode.window.createOutputChannel('scholia');
  statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  statusItem.command = 'scholia.editor.cancel';
  statusItem.tooltip = 'scholia: click to cancel the running job';
  context.subscriptions.push(output, statusItem);
  const register = (id: string, f: () => Promise<unknown>) => context.subscriptions.push(vscode.commands.registerCommand(id, f));

  // Both depths ask for an optional focus (Escape cancels, Enter on empty researches the whole
  // note). The server announces the end of every job (what was written where) as a message.
  const research = async (deep: boolean) => {
    const n = editorNote();
    if (!n) return;
    const focus = await vscode.window.showInputBox({ prompt: 'Focus (optional; Enter for the whole note)' });
    if (focus === undefined) return;
    await exec('scholia.research', researchArgs(n.uri, deep, focus));
  };
  register('scholia.editor.research', () => research(false));
  register('scholia.editor.researchDeep', () => research(true));
  register('scholia.editor.deepSearch', async () => {
    const n = editorNote();
    if (!n) return;
    const s = selected(n.editor);
    await exec('scholia.deepSearch', selectionArgs(n.uri, s.text, s.range));
  });
  register('scholia.editor.ask', async () => {
    const n = editorNote();
    if (!n) return;
    const model = await vscode.window.showQuickPick(SONAR_TIERS, { placeHolder: 'Sonar tier' });
    if (!model) return;
    const s = selected(n.editor);
    await exec('scholia.ask', selectionArgs(n.uri, s.text, s.range, model));
  });
  register('scholia.editor.startDeepResearch', async () => {
    const n = editorNote();
    if (!n) return;
    const args: Record<string, unknown> = { uri: n.uri };
    if (!n.editor.selection.isEmpty) Object.assign(args, selectionArgs(n.uri, n.editor.document.getText(n.editor.selection), client!.code2ProtocolConverter.asRange(n.editor.selection)));
    await exec('scholia.startDeepResearch', args);
  });
  register('scholia.editor.researchNoteTask', async () => {
    const n = editorNote();
    if (!n) return;
    const r = await exec<{ task_id: string; summary: string }>('scholia.tasks', { action: 'start', kind: 'research-note', uri: n.uri });
    if (r) {
      lastTask = r.task_id;
      void vscode.window.showInformationMessage(`scholia: ${r.summary}`);
    }
  });
  register('scholia.editor.taskStatus', async () => {
    const id = await pickTask('Task to check');
    const s = id && (await exec<{ status: string; elapsed_minutes: number; current_action?: string; error?: string }>('scholia.tasks', { action: 'status', task_id: id }));
    if (s) void vscode.window.showInformationMessage(`scholia: ${id} ${s.status}, ${s.elapsed_minutes.toFixed(1)} min${s.current_action ? ` — ${s.current_action}` : ''}${s.error ? ` — ${s.error}` : ''}`);
  });
  register('scholia.editor.taskResults', async () => {
    const id = await pickTask('Task to read');
    const r = id && (await exec<{ report: string }>('scholia.tasks', { action: 'results', task_id: id }));
    if (r) await vscode.window.showTextDocument(await vscode.workspace.openTextDocument({ language: 'markdown', content: r.report }));
  });
  register('scholia.editor.taskCancel', async () => {
    const id = await pickTask('Task to cancel');
    const r = id && (await exec<{ status: string }>('scholia.tasks', { action: 'cancel', task_id: id }));
    if (r) void vscode.window.showInformationMessage(`scholia: ${id} ${r.status}`);
  });
  register('scholia.editor.taskList', async () => {
    const id = await pickTask('Background tasks');
    if (id) lastTask = id;
  });
  register('scholia.editor.taskSave', async () => {
    const id = await pickTask('Task to save');
    const r = id && (await exec<{ file_path: string }>('scholia.tasks', { action: 'save', task_id: id }));
    if (r) await vscode.window.showTextDocument(vscode.Uri.file(r.file_path));
  });
  register('scholia.editor.search', async () => {
    const query = await vscode.window.showInputBox({ prompt: 'Search the vault' });
    if (!query) return;
    const r = await exec<{ summary: string; hits: { uri: string; title: string; snippet: string; heading?: string; line?: number }[] }>('scholia.search', { query });
    if (!r) return;
    const picked = await vscode.window.showQuickPick(
      r.hits.map((h) => ({ label: h.title, description: h.heading ?? '', detail: h.snippet, uri: h.uri, line: h.line ?? 1 })),
      { placeHolder: r.summary, matchOnDetail: true },
    );
    if (picked) {
      const at = new vscode.Position(picked.line - 1, 0);
      await vscode.window.showTextDocument(vscode.Uri.parse(picked.uri), { selection: new vscode.Range(at, at) });
    }
  });
  register('scholia.editor.cancel', async () => {
    const r = await exec<{ cancelled: boolean; title?: string; message?: string }>('scholia.cancel');
    if (r) void vscode.window.showInformationMessage(`scholia: ${r.cancelled ? `cancelling ${r.title}` : r.message}`);
  });
  register('scholia.editor.restart', async () => {
    await client?.stop();
    await startClient(context, output).catch((e) => vscode.window.showErrorMessage(`scholia: ${(e as Error).message}`));
  });
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (['scholia.server', 'scholia.settings', 'scholia.logLevel'].some((s) => e.affectsConfiguration(s))) {
        const choice = await vscode.window.showInformationMessage('scholia: restart the server to apply the new settings?', 'Restart');
        if (choice) await vscode.commands.executeCommand('scholia.editor.restart');
      }
    }),
  );
  try {
    await startClient(context, output);
  } catch (e) {
    void vscode.window.showErrorMessage(`scholia: ${(e as Error).message}`);
  }
}

export async function deactivate() {
  if (polling) clearInterval(polling);
  await client?.stop();
}
