-- The plugin in a vault without any marker (no .obsidian, .scholia.toml or .git): the server
-- finds the vault from the note; `[[` completion of a multi-word note name through Neovim's own
-- completion inserts the whole name and `]]`; `gd` follows the link; progress shows in the
-- command line by default; the server says how a job ended, once.
-- Run with `-c 'luafile …'`, not `-l`: Neovim's main loop must read the typed keys, so the
-- steps run in a coroutine that yields to it (`keys`, `until_`) and a timer resumes.
-- Env: SCHOLIA_BIN, VAULT, PLUGIN (editor-plugins/nvim).
package.path = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/?.lua;' .. package.path
local t = require('common')

vim.opt.runtimepath:prepend(assert(os.getenv('PLUGIN')))
local scholia = require('scholia')
scholia.setup({ cmd = { t.bin, 'lsp' } })
-- What the user is told: notifications and messages kept in the history (the server's
-- window/showMessage), apart from the progress the plugin echoes without history.
local messages = {}
vim.notify = function(msg, level)
  table.insert(messages, msg)
end
local echoed = {}
local echo = vim.api.nvim_echo
vim.api.nvim_echo = function(chunks, history, opts)
  local text = table.concat(vim.tbl_map(function(c) return c[1] end, chunks))
  table.insert(history and messages or echoed, text)
  return echo(chunks, history, opts)
end

-- The test's steps, in a coroutine the main loop resumes (keys typed in between are read).
local co
local function resume()
  local ok, err = coroutine.resume(co)
  if not ok then t.fail(tostring(err)) end
  if coroutine.status(co) == 'dead' then vim.cmd('qall!') end
end
-- Types `k` and lets the main loop read it.
local function keys(k)
  vim.api.nvim_feedkeys(vim.keycode(k), 't', false)
  vim.defer_fn(resume, 50)
  coroutine.yield()
end
-- Yields to the main loop until `cond` holds.
local function until_(cond, ms, what)
  local deadline = vim.uv.now() + ms
  while not cond() do
    if vim.uv.now() > deadline then t.fail('timed out waiting for ' .. what) end
    vim.defer_fn(resume, 20)
    coroutine.yield()
  end
end
vim.defer_fn(function() t.fail('the test took more than 120 s') end, 120000)

co = coroutine.create(function()
  -- A note in a sub-folder: the vault is the folder above it, not the sub-folder, not nothing.
  t.edit('Journal/Bread log.md')
  t.wait(15000, function()
    for _, e in ipairs(echoed) do
      if e:find('Indexing vault', 1, true) then return true end
    end
    return false
  end, 'indexing progress in the command line')
  local status
  t.wait(20000, function()
    status = t.request('workspace/executeCommand', { command = 'scholia.status', arguments = {} })
    -- Open and indexed: a completion asked while the first notes are indexed has no items,
    -- and the menu never shows (seen under load).
    return status.vault.state == 'ready' and status.vault.notes >= 7
  end, 'the vault to open and its 7 notes to be indexed')
  if status.vault.root ~= vim.fn.resolve(t.vault) then t.fail('vault root: ' .. vim.inspect(status.vault)) end
  t.log('marker-less vault served from ' .. status.vault.root .. ' (' .. status.vault.notes .. ' notes)')

  -- Completion of a multi-word name: type `[[Lac`, complete, accept.
  local buf = vim.api.nvim_get_current_buf()
  vim.o.completeopt = 'menuone,noinsert'
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '' })
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })
  keys('A[[Lac<C-x><C-o>')
  until_(function() return vim.fn.pumvisible() == 1 end, 10000, 'the completion menu')
  local menu = vim.fn.complete_info({ 'items' }).items
  t.log('completion menu: ' .. table.concat(vim.tbl_map(function(i) return i.word end, menu), ', '))
  keys('<C-y>')
  until_(function() return vim.api.nvim_get_current_line():find(']]', 1, true) ~= nil end, 5000, 'the accepted item')
  keys('<Esc>')
  local line = vim.api.nvim_get_current_line()
  if line ~= '[[Lactic acid bacteria]]' then t.fail('completion inserted: ' .. line) end
  t.log('completion inserted ' .. line)

  -- gd follows it.
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 4 })
  keys('gd')
  until_(function() return vim.api.nvim_buf_get_name(0):find('Lactic acid bacteria.md', 1, true) ~= nil end, 5000, 'gd to open the note')
  vim.cmd('buffer ' .. buf)
  t.log('gd followed the wikilink')

  -- A job's progress shows in the command line by default; its end is told once, by the server.
  local function about()
    return vim.tbl_filter(function(m) return m:find('Research this note', 1, true) or m:find('Wrote', 1, true) end, messages)
  end
  vim.cmd('ScholiaResearch')
  t.wait(30000, function() return #about() > 0 end, 'the message saying how the job ended')
  vim.wait(500)
  local progress = vim.tbl_filter(function(e) return e:find('^scholia: Research this note') end, echoed)
  if #progress == 0 then t.fail('no progress in the command line: ' .. vim.inspect(echoed)) end
  about = about()
  if #about ~= 1 then t.fail('told ' .. #about .. ' times: ' .. vim.inspect(about)) end
  t.log('progress showed ' .. progress[#progress] .. '; the end was told once: ' .. about[1])
end)
vim.schedule(resume)
