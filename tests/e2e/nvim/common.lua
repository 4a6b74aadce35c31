-- Shared helpers for the headless Neovim end-to-end tests.
-- Env: SCHOLIA_BIN (the binary), VAULT (a temp copy of a vault, writable).
local M = {}

M.vault = assert(os.getenv('VAULT'), 'VAULT not set')
M.bin = assert(os.getenv('SCHOLIA_BIN'), 'SCHOLIA_BIN not set')
M.progress = {}

function M.fail(msg)
  io.stderr:write('FAIL: ' .. msg .. '\n')
  vim.cmd('cquit 1')
end

function M.log(msg)
  io.stderr:write(msg .. '\n')
end

function M.wait(ms, cond, what)
  if not vim.wait(ms, cond, 20) then
    M.fail('timed out waiting for ' .. what)
  end
end

-- The configuration the README shows, pointed at the binary under test.
function M.setup()
  vim.lsp.config('scholia', {
    cmd = { M.bin, 'lsp' },
    filetypes = { 'markdown' },
    root_markers = { '.obsidian', '.scholia.toml', '.git' },
  })
  vim.lsp.enable('scholia')
  vim.api.nvim_create_autocmd('LspProgress', {
    callback = function(ev)
      local value = ev.data.params.value
      table.insert(M.progress, { token = ev.data.params.token, kind = value.kind, title = value.title, message = value.message })
    end,
  })
end

function M.client()
  return vim.lsp.get_clients({ name = 'scholia' })[1]
end

-- Opens a note and waits for the server to attach.
function M.edit(rel)
  vim.cmd.edit(vim.fn.fnameescape(M.vault .. '/' .. rel))
  M.wait(10000, function() return M.client() ~= nil end, 'the scholia client to attach')
end

-- Waits for the end of a progress whose begin had `title`; returns the end message.
function M.wait_progress_end(title, ms)
  local token
  local message
  M.wait(ms, function()
    for _, p in ipairs(M.progress) do
      if p.kind == 'begin' and p.title == title then token = p.token end
      if token ~= nil and p.token == token and p.kind == 'end' then
        message = p.message
        return true
      end
    end
    return false
  end, 'progress "' .. title .. '" to end')
  return message
end

-- Waits for the begin of a progress titled `title` that is not in `seen`; returns its token.
function M.wait_progress_begin(title, ms, seen)
  local token
  M.wait(ms, function()
    for _, p in ipairs(M.progress) do
      if p.kind == 'begin' and p.title == title and not (seen and seen[p.token]) then
        token = p.token
        return true
      end
    end
    return false
  end, 'progress "' .. title .. '" to begin')
  return token
end

-- Waits for the end of the progress `token`; returns its message.
function M.wait_token_end(token, ms)
  local message
  M.wait(ms, function()
    for _, p in ipairs(M.progress) do
      if p.token == token and p.kind == 'end' then
        message = p.message
        return true
      end
    end
    return false
  end, 'progress ' .. tostring(token) .. ' to end')
  return message
end

function M.buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr or 0, 0, -1, false), '\n')
end

-- Runs the code action titled `title` through Neovim's own code-action machinery.
function M.code_action(title)
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(a) return a.title == title end,
  })
end

-- Puts the cursor on the line holding `text` (not a heading); returns its 1-based row.
function M.goto_line(bufnr, text)
  local row
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if line:find(text, 1, true) and not line:find('^#') then row = i end
  end
  if not row then M.fail('line not found: ' .. text) end
  vim.api.nvim_win_set_cursor(0, { row, 0 })
  return row
end

-- Waits until the background task `id` has completed (asked through `scholia.tasks`).
function M.wait_task(id, bufnr, ms)
  M.wait(ms or 60000, function()
    local r = M.request('workspace/executeCommand', { command = 'scholia.tasks', arguments = { { action = 'status', task_id = id } } }, bufnr)
    return r.status == 'completed'
  end, 'task ' .. tostring(id) .. ' to complete')
end

function M.request(method, params, bufnr)
  local client = M.client()
  local resp, err = client:request_sync(method, params, 10000, bufnr or 0)
  if err then M.fail(method .. ': ' .. tostring(err)) end
  if resp and resp.err then M.fail(method .. ': ' .. vim.inspect(resp.err)) end
  return resp and resp.result
end

return M
