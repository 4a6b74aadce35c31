-- scholia for Neovim 0.11+: registers the language server and the :Scholia* commands.
-- Everything here translates to the server's own commands (`scholia lsp --describe` lists
-- them); no research logic lives in the plugin.
local M = {}

-- The server commands this plugin sends (checked against the server by scholia's tests and
-- by :checkhealth scholia).
M.commands = {
  research = 'scholia.research',
  deep_search = 'scholia.deepSearch',
  ask = 'scholia.ask',
  background = 'scholia.startDeepResearch',
  tasks = 'scholia.tasks',
  search = 'scholia.search',
  status = 'scholia.status',
  cancel = 'scholia.cancel',
  -- Run by the backlinks lens on a note's title (client-side: the references list).
  references = 'scholia.references',
  -- Run by the "Show the contradicting source" code action.
  show_source = 'scholia.showSource',
  -- Run by the "Create note" quick fix (the server makes the note and opens it).
  create_note = 'scholia.createNote',
}

M.defaults = {
  -- The server command; the binary is found on PATH unless a path is given.
  cmd = { 'scholia', 'lsp' },
  filetypes = { 'markdown' },
  -- The vault root: the nearest folder holding one of these. Without one the server decides
  -- from the note (never a code repository: `.git` is not a vault marker).
  root_markers = { '.obsidian', '.scholia.toml' },
  -- Show code lenses (backlinks on the title; when and how `## Research` was made, stale or
  -- not — run one with vim.lsp.codelens.run()).
  codelens = true,
  -- initializationOptions: the shape of `.scholia.toml` (see :help scholia-settings).
  settings = {},
  -- Extra environment for the server process (provider keys; see :help scholia-env).
  env = nil,
  -- :ScholiaSearch results: 'quickfix' or 'select' (vim.ui.select).
  search = 'quickfix',
  -- Show the running job's progress in the command line (the server announces its end).
  progress = true,
  -- Map `gd` in vault notes to follow the wikilink or Markdown link under the cursor.
  mappings = true,
  -- Complete [[note names]] with Neovim's LSP completion (inserts the whole name and `]]`);
  -- `autocomplete = true` opens the menu as you type `[[`.
  completion = true,
  autocomplete = false,
}

M.config = vim.deepcopy(M.defaults)
-- Running jobs by progress token: { title, message, percentage, cancellable }.
M.jobs = {}
-- The id of the last task started from this editor (default of :ScholiaTask status/cancel/…).
M.last_task = nil

local function notify(msg, level)
  vim.notify('scholia: ' .. msg, level or vim.log.levels.INFO)
end

-- Why no server runs: the binary missing (named with where it was looked for), else the buffer.
local function why_no_server()
  local cmd = (M.config and M.config.cmd or { 'scholia' })[1]
  if vim.fn.executable(cmd) == 0 then
    local where = cmd:find('/') and cmd or ('PATH (' .. (vim.env.PATH or '') .. ')')
    return string.format('the scholia binary `%s` was not found in %s; install it or set cmd = { "/path/to/scholia", "lsp" } in setup()', cmd, where)
  end
  return 'no scholia language server on this buffer (open a Markdown note of a vault)'
end

local function client(bufnr)
  local c = vim.lsp.get_clients({ name = 'scholia', bufnr = bufnr or 0 })[1]
  if not c then
    notify(why_no_server(), vim.log.levels.ERROR)
  end
  return c
end

-- Runs a server command; `on_result(result)` gets its answer, errors are shown.
function M.exec(command, args, bufnr, on_result)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local c = client(bufnr)
  if not c then return end
  c:request('workspace/executeCommand', { command = command, arguments = args and { args } or {} }, function(err, result)
    if err then
      notify(err.message, vim.log.levels.ERROR)
      return
    end
    if on_result then on_result(result) end
  end, bufnr)
end

-- The LSP position of byte column `col` on 0-based line `row`.
local function position(bufnr, row, col, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  col = math.min(col, #line)
  return { line = row, character = vim.str_utfindex(line, encoding, col, false) }
end

-- The text and LSP range of a command's range: the visual selection when the command was
-- called from it, else whole lines.
local function selection(opts, bufnr, encoding)
  local srow, scol, erow, ecol = opts.line1 - 1, 0, opts.line2 - 1, nil
  local vs, ve = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  local mode = vim.fn.visualmode()
  if vs[2] == opts.line1 and ve[2] == opts.line2 and mode == 'v' then
    scol, ecol = vs[3] - 1, ve[3]
  end
  local last = vim.api.nvim_buf_get_lines(bufnr, erow, erow + 1, false)[1] or ''
  ecol = math.min(ecol or #last, #last)
  local text = table.concat(vim.api.nvim_buf_get_text(bufnr, srow, scol, erow, ecol, {}), '\n')
  return vim.trim(text), { start = position(bufnr, srow, scol, encoding), ['end'] = position(bufnr, erow, ecol, encoding) }
end

local function uri(bufnr)
  return vim.uri_from_bufnr(bufnr)
end

function M.research(opts)
  local args = vim.deepcopy(opts.fargs)
  local depth = 'shallow'
  if args[1] == 'deep' or args[1] == 'shallow' then depth = table.remove(args, 1) end
  local focus = #args > 0 and table.concat(args, ' ') or nil
  local bufnr = vim.api.nvim_get_current_buf()
  M.exec(M.commands.research, { uri = uri(bufnr), depth = depth, focus = focus }, bufnr)
end

-- A question from the range (visual selection or lines), the arguments, or the current line.
local function question(opts, bufnr, from_line)
  local c = client(bufnr)
  if not c then return end
  if #opts.fargs > 0 and not from_line then
    return table.concat(opts.fargs, ' '), nil
  end
  if opts.range > 0 then
    return selection(opts, bufnr, c.offset_encoding)
  end
  local row = vim.api.nvim_win_get_cursor(0)[1]
  return selection({ line1 = row, line2 = row }, bufnr, c.offset_encoding)
end

function M.deep_search(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  if #opts.fargs == 0 and opts.range == 0 then
    notify('select the question (visual mode) or give it: :ScholiaDeepSearch {question}', vim.log.levels.ERROR)
    return
  end
  local q, range = question(opts, bufnr)
  if not q then return end
  M.exec(M.commands.deep_search, { uri = uri(bufnr), query = q, range = range }, bufnr)
end

function M.ask(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local q, range = question(opts, bufnr, true)
  if not q then return end
  M.exec(M.commands.ask, { uri = uri(bufnr), query = q, range = range, model = opts.fargs[1] }, bufnr)
end

local function show_lines(lines, level)
  vim.notify(table.concat(lines, '\n'), level or vim.log.levels.INFO)
end

-- The first line of `text`, at most `n` characters.
local function short(text, n)
  local line = vim.trim((text or ''):match('^%s*([^\n]*)') or '')
  if vim.fn.strchars(line) > n then line = vim.fn.strcharpart(line, 0, n - 1) .. '…' end
  return line
end

local function task_line(t)
  return string.format('%s  %-17s %-13s %s', t.id or t.task_id, t.status, t.kind or '', t.note or short(t.query, 60))
end

-- :ScholiaTask {action} [args]
function M.task(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local args = vim.deepcopy(opts.fargs)
  local action = table.remove(args, 1)
  local rest = table.concat(args, ' ')
  local id = args[1] or M.last_task
  local function need_id()
    if not id then notify('give a task id (:ScholiaTask list shows them)', vim.log.levels.ERROR) end
    return id
  end
  if action == 'start' then
    if rest == '' then
      -- Like the code action: the selection, or the whole note; the summary lands in the note.
      local a = { uri = uri(bufnr) }
      if opts.range > 0 then
        local c = client(bufnr)
        if not c then return end
        a.query, a.range = selection(opts, bufnr, c.offset_encoding)
      end
      M.exec(M.commands.background, a, bufnr)
    else
      M.exec(M.commands.tasks, { action = 'start', query = rest }, bufnr, function(r)
        M.last_task = r.task_id
        notify(r.summary)
      end)
    end
  elseif action == 'note' then
    M.exec(M.commands.tasks, { action = 'start', kind = 'research-note', uri = uri(bufnr), query = rest }, bufnr, function(r)
      M.last_task = r.task_id
      notify(r.summary)
    end)
  elseif action == 'status' then
    if not need_id() then return end
    M.exec(M.commands.tasks, { action = 'status', task_id = id }, bufnr, function(s)
      local line = string.format('%s %s, %.1f min, $%.2f', s.task_id, s.status, s.elapsed_minutes, s.cost_so_far)
      if s.current_action then line = line .. ' — ' .. s.current_action end
      if s.error then line = line .. '\nerror: ' .. s.error end
      notify(line)
    end)
  elseif action == 'results' then
    if not need_id() then return end
    M.exec(M.commands.tasks, { action = 'results', task_id = id }, bufnr, function(r)
      vim.cmd('botright new')
      local out = vim.api.nvim_get_current_buf()
      vim.bo[out].buftype, vim.bo[out].bufhidden, vim.bo[out].filetype = 'nofile', 'wipe', 'markdown'
      vim.api.nvim_buf_set_name(out, 'scholia://task/' .. r.task_id)
      vim.api.nvim_buf_set_lines(out, 0, -1, false, vim.split(r.report, '\n'))
    end)
  elseif action == 'cancel' then
    if not need_id() then return end
    M.exec(M.commands.tasks, { action = 'cancel', task_id = id }, bufnr, function(r)
      notify(r.summary)
    end)
  elseif action == 'list' then
    M.exec(M.commands.tasks, { action = 'list' }, bufnr, function(r)
      if #r.tasks == 0 then return notify('no tasks') end
      local lines = {}
      for _, t in ipairs(r.tasks) do table.insert(lines, task_line(t)) end
      show_lines(lines)
    end)
  elseif action == 'save' then
    if not need_id() then return end
    M.exec(M.commands.tasks, { action = 'save', task_id = id, output_dir = args[2] }, bufnr, function(r)
      notify('saved ' .. r.file_path)
    end)
  else
    notify('usage: :ScholiaTask start [question] | note [focus] | status [id] | results [id] | cancel [id] | list | save [id] [dir]',
      vim.log.levels.ERROR)
  end
end

-- :ScholiaSearch[!] {query}: the quickfix list (or a picker with ! or `search = 'select'`).
function M.search(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local query = table.concat(opts.fargs, ' ')
  M.exec(M.commands.search, { query = query }, bufnr, function(r)
    if #r.hits == 0 then return notify(r.summary) end
    local items = {}
    for _, h in ipairs(r.hits) do
      local text = h.title .. (h.heading and (' › ' .. h.heading) or '') .. ': ' .. h.snippet:gsub('\n', ' ')
      table.insert(items, { filename = vim.uri_to_fname(h.uri), lnum = h.line or 1, col = 1, text = text })
    end
    if opts.bang or M.config.search == 'select' then
      vim.ui.select(items, {
        prompt = 'scholia: ' .. r.summary,
        format_item = function(i) return i.text end,
      }, function(choice)
        if choice then vim.cmd.edit(vim.fn.fnameescape(choice.filename)) end
      end)
    else
      vim.fn.setqflist({}, ' ', { title = 'scholia: ' .. query, items = items })
      vim.cmd('botright copen')
    end
  end)
end

-- :ScholiaCancel: the newest running job of the server (research, deep search, ask, …).
function M.cancel()
  M.exec(M.commands.cancel, nil, nil, function(r)
    notify(r.cancelled and ('cancelling ' .. r.title) or r.message)
  end)
end

-- A statusline component: the newest running job, e.g. "scholia: Research this note 40%".
function M.statusline()
  local newest
  for _, job in pairs(M.jobs) do
    if not newest or job.seq > newest.seq then newest = job end
  end
  if not newest then return '' end
  local s = 'scholia: ' .. newest.title
  -- One `%`: the documented `%{…}` item shows the string as it is.
  if newest.percentage then s = s .. ' ' .. newest.percentage .. '%' end
  if newest.message and newest.message ~= '' then s = s .. ' — ' .. newest.message end
  return s
end

-- Shows a job's progress in the command line, without history and within one line (no
-- "Press ENTER").
local function echo(job, message)
  if not M.config.progress then return end
  local line = 'scholia: ' .. job.title
  if job.percentage then line = line .. ' ' .. job.percentage .. '%' end
  if message and message ~= '' then line = line .. ' — ' .. message end
  local width = math.max(vim.v.echospace - 1, 10)
  if vim.fn.strdisplaywidth(line) > width then line = vim.fn.strcharpart(line, 0, width - 1) .. '…' end
  vim.api.nvim_echo({ { line } }, false, {})
end

local seq = 0
local function on_progress(ev)
  local c = vim.lsp.get_client_by_id(ev.data.client_id)
  if not c or c.name ~= 'scholia' then return end
  local token, value = ev.data.params.token, ev.data.params.value
  if type(value) ~= 'table' then return end
  if value.kind == 'begin' then
    seq = seq + 1
    M.jobs[token] = { title = value.title, message = value.message, percentage = value.percentage, cancellable = value.cancellable, seq = seq }
    echo(M.jobs[token], value.message)
  elseif value.kind == 'report' and M.jobs[token] then
    local job = M.jobs[token]
    job.message = value.message or job.message
    job.percentage = value.percentage or job.percentage
    echo(job, job.message)
  elseif value.kind == 'end' then
    local job = M.jobs[token]
    M.jobs[token] = nil
    -- The server tells how a research job ended (one message); indexing ends quietly here.
    if job and job.title == 'Indexing vault' then echo({ title = job.title }, value.message) end
  end
  vim.cmd('redrawstatus')
end

local function complete_task(arglead, line)
  local words = vim.split(line, '%s+')
  if #words <= 2 then
    return vim.tbl_filter(function(a) return a:find(arglead, 1, true) == 1 end,
      { 'start', 'note', 'status', 'results', 'cancel', 'list', 'save' })
  end
  return {}
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  local cfg = M.config
  vim.lsp.config('scholia', {
    cmd = cfg.cmd,
    cmd_env = cfg.env,
    filetypes = cfg.filetypes,
    root_markers = cfg.root_markers,
    init_options = cfg.settings,
  })
  vim.lsp.enable('scholia')
  -- Said at once, not at the first command: a Markdown buffer with no binary to serve it.
  if vim.fn.executable(cfg.cmd[1]) == 0 then
    vim.schedule(function() notify(why_no_server(), vim.log.levels.WARN) end)
  end
  local group = vim.api.nvim_create_augroup('scholia', { clear = true })
  vim.api.nvim_create_autocmd('LspProgress', { group = group, callback = on_progress })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(ev)
      local c = vim.lsp.get_client_by_id(ev.data.client_id)
      if not c or c.name ~= 'scholia' then return end
      if cfg.mappings and vim.fn.maparg('gd', 'n', false, true).buffer ~= 1 then
        vim.keymap.set('n', 'gd', vim.lsp.buf.definition, { buffer = ev.buf, desc = 'scholia: follow the link under the cursor' })
      end
      if cfg.completion then
        vim.lsp.completion.enable(true, c.id, ev.buf, { autotrigger = cfg.autocomplete })
      end
      if cfg.codelens then
        -- Backlinks on the title, the research lens on `## Research`.
        vim.lsp.codelens.refresh({ bufnr = ev.buf })
        vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
          group = group,
          buffer = ev.buf,
          callback = function() vim.lsp.codelens.refresh({ bufnr = ev.buf }) end,
        })
      end
    end,
  })
  -- The backlinks lens lists the references at its position, as `gr` would.
  vim.lsp.commands[M.commands.references] = function(command)
    local arg = (command.arguments or {})[1] or {}
    local bufnr = vim.uri_to_bufnr(arg.uri)
    local win = vim.fn.bufwinid(bufnr)
    if win ~= -1 and arg.position then
      vim.api.nvim_win_set_cursor(win, { arg.position.line + 1, arg.position.character })
    end
    vim.lsp.buf.references({ includeDeclaration = false })
  end
  local cmd = vim.api.nvim_create_user_command
  cmd('ScholiaResearch', M.research, { nargs = '*', desc = 'scholia: research this note ([deep] [focus…])' })
  cmd('ScholiaDeepSearch', M.deep_search, { nargs = '*', range = true, desc = 'scholia: deep search the selection or {question}' })
  cmd('ScholiaAsk', M.ask, { nargs = '?', range = true, desc = 'scholia: ask Sonar about the selection or line ([model])',
    complete = function() return { 'sonar', 'sonar-pro', 'sonar-reasoning-pro', 'sonar-deep-research' } end })
  cmd('ScholiaTask', M.task, { nargs = '+', range = true, complete = complete_task, desc = 'scholia: background research tasks' })
  cmd('ScholiaSearch', M.search, { nargs = '+', bang = true, desc = 'scholia: search the vault' })
  cmd('ScholiaCancel', M.cancel, { nargs = 0, desc = 'scholia: cancel the running job' })
end

return M
