-- The Neovim plugin (editor-plugins/nvim) installed through plain 'packpath', against the
-- loopback fakes: every :Scholia* command, the statusline component, :help scholia and
-- :checkhealth scholia (which must never show a key).
-- Env: SCHOLIA_BIN, VAULT, PLUGIN (editor-plugins/nvim), SECRETS (comma-separated key values).
package.path = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/?.lua;' .. package.path
local t = require('common')

-- Install as a user would with packpath (a copy: :helptags writes into the plugin's doc/).
local pack = vim.fn.tempname()
vim.fn.mkdir(pack .. '/pack/scholia/start', 'p')
vim.fn.system({ 'cp', '-r', assert(os.getenv('PLUGIN')), pack .. '/pack/scholia/start/scholia' })
vim.opt.packpath:prepend(pack)
vim.cmd('packloadall!')
vim.cmd('helptags ALL')
local scholia = require('scholia')
scholia.setup({ cmd = { t.bin, 'lsp' } })
vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(ev)
    local value = ev.data.params.value
    table.insert(t.progress, { token = ev.data.params.token, kind = value.kind, title = value.title, message = value.message })
  end,
})
-- What the user is told: the plugin's notifications and the server's window/showMessage
-- (which Neovim echoes into the message history).
local messages = {}
vim.notify = function(msg, level)
  table.insert(messages, msg)
  if level == vim.log.levels.ERROR then t.log('notify error: ' .. msg) end
end
local echo = vim.api.nvim_echo
vim.api.nvim_echo = function(chunks, history, opts)
  if history then table.insert(messages, table.concat(vim.tbl_map(function(c) return c[1] end, chunks))) end
  return echo(chunks, history, opts)
end
local function said(pattern)
  for _, m in ipairs(messages) do
    if m:find(pattern, 1, true) then return m end
  end
end
local function wait_said(pattern, ms)
  t.wait(ms or 30000, function() return said(pattern) ~= nil end, 'a message with "' .. pattern .. '"')
  return said(pattern)
end
local function seen_tokens()
  local s = {}
  for _, p in ipairs(t.progress) do s[p.token] = true end
  return s
end

-- :help scholia
vim.cmd('help scholia')
if vim.bo.filetype ~= 'help' or not t.buffer_text():find('*scholia.txt*', 1, true) then t.fail(':help scholia did not open the doc') end
vim.cmd('help :ScholiaTask')
vim.cmd('close')
t.log(':help scholia works')

t.edit('Sourdough starter.md')
t.wait_progress_end('Indexing vault', 30000)
local buf = vim.api.nvim_get_current_buf()

-- :ScholiaSearch → quickfix; :ScholiaSearch! → picker.
vim.cmd('ScholiaSearch scoby')
t.wait(10000, function() return #vim.fn.getqflist() > 0 end, 'search hits in the quickfix list')
local qf = vim.fn.getqflist()
if not vim.api.nvim_buf_get_name(qf[1].bufnr):find('Kombucha.md', 1, true) then t.fail('first hit: ' .. vim.inspect(qf[1])) end
-- The hit opens at its heading (or its match), not at line 1 of every note.
local hit_line = vim.fn.readfile(vim.api.nvim_buf_get_name(qf[1].bufnr))[qf[1].lnum] or ''
if qf[1].lnum <= 1 or not (hit_line:find('^#') or hit_line:lower():find('scoby', 1, true)) then
  t.fail('quickfix line ' .. qf[1].lnum .. ': ' .. hit_line)
end
vim.cmd('cclose')
local offered
vim.ui.select = function(items, _, choose)
  offered = items
  choose(items[1])
end
vim.cmd('ScholiaSearch! scoby')
t.wait(10000, function() return offered ~= nil end, 'the picker')
t.wait(5000, function() return vim.api.nvim_buf_get_name(0):find('Kombucha.md', 1, true) ~= nil end, 'the picked note to open')
vim.cmd('buffer ' .. buf)
t.log(':ScholiaSearch: ' .. #qf .. ' hits in the quickfix list, picker opened ' .. offered[1].filename)

-- :ScholiaResearch, with the statusline component while it runs.
local statusline = {}
local timer = vim.uv.new_timer()
timer:start(0, 20, vim.schedule_wrap(function()
  local s = scholia.statusline()
  if s ~= '' then statusline[s] = true end
end))
vim.cmd('ScholiaResearch')
local done = t.wait_progress_end('Research this note', 60000)
if not done or done:match('^failed') then t.fail('research: ' .. tostring(done)) end
if not t.buffer_text(buf):find('\n## Research\n\n<!%-%- scholia:research [^\n]*%-%->\n### ') then t.fail('no Research section') end
wait_said('scholia: Wrote `## Research` in Sourdough starter.md')
local shown = vim.tbl_keys(statusline)
if #shown == 0 or not shown[1]:find('^scholia: Research this note') then t.fail('statusline: ' .. vim.inspect(shown)) end
for _, s in ipairs(shown) do
  -- The documented `%{…}` item shows the string as it is: one `%`, never `5%%`.
  if s:find('%%', 1, true) then t.fail('statusline shows a doubled percent sign: ' .. s) end
end
t.log(':ScholiaResearch landed; statusline showed e.g. ' .. shown[1])

-- :ScholiaDeepSearch on a visual selection, then with an argument.
local question = 'How long can a starter survive in the fridge without feeding?'
t.goto_line(buf, question)
vim.api.nvim_feedkeys('V', 'nx!', false)
vim.api.nvim_feedkeys(':ScholiaDeepSearch\r', 'nx!', false)
local seen = seen_tokens()
local ds = t.wait_progress_begin('Deep search selection', 10000)
t.wait_token_end(ds, 60000)
if not t.buffer_text(buf):find('### ' .. question .. '\n', 1, true) then t.fail('deep search of the selection did not land') end
vim.cmd('ScholiaDeepSearch How warm should koji be kept?')
local ds2 = t.wait_progress_begin('Deep search selection', 10000, seen_tokens())
t.wait_token_end(ds2, 60000)
if not t.buffer_text(buf):find('### How warm should koji be kept?\n', 1, true) then t.fail('deep search of the argument did not land') end
t.log(':ScholiaDeepSearch: selection and argument landed')

-- :ScholiaAsk on the current line with a tier.
local other = 'Does the flour\'s own microbes or the baker\'s hands seed the culture?'
t.goto_line(buf, other)
vim.cmd('ScholiaAsk sonar-pro')
local ask = t.wait_progress_begin('Ask Sonar about selection', 10000)
local asked = t.wait_token_end(ask, 60000)
if not t.buffer_text(buf):find('### - ' .. other, 1, true) and not t.buffer_text(buf):find('### ' .. other, 1, true) then
  t.fail('ask did not land (' .. tostring(asked) .. '):\n' .. t.buffer_text(buf))
end
t.log(':ScholiaAsk landed: ' .. tostring(asked))

-- :ScholiaTask start {question} / status / list / results / save.
vim.cmd('ScholiaTask start Why is sourdough sour?')
wait_said('started gemini task')
local id = scholia.last_task
t.wait_task(id, buf)
vim.cmd('ScholiaTask status')
if not wait_said(id .. ' completed') then t.fail('status') end
vim.cmd('ScholiaTask list')
for l in wait_said(id .. '  completed'):gmatch('[^\n]+') do
  if vim.fn.strchars(l) > 110 then t.fail(':ScholiaTask list shows more than the query: ' .. l) end
end
vim.cmd('ScholiaTask results')
t.wait(10000, function() return vim.api.nvim_buf_get_name(0):find('scholia://task/' .. id, 1, true) ~= nil end, 'the results buffer')
if not t.buffer_text():find('fake deep-research report', 1, true) then t.fail('results: ' .. t.buffer_text()) end
vim.cmd('close')
vim.cmd('ScholiaTask save')
local saved = wait_said('saved ')
if vim.fn.filereadable(saved:match('saved (.*)$')) ~= 1 then t.fail('not saved: ' .. saved) end
t.log(':ScholiaTask start/status/list/results/save: ' .. saved)

-- :ScholiaTask note: a research-note task lands in the buffer.
vim.cmd('ScholiaTask note')
wait_said('started research-note task')
local note_task = scholia.last_task
t.wait_task(note_task, buf)
if not t.buffer_text(buf):find('### ' .. question, 1, true) then t.fail('the research-note task dropped the questions') end
t.log(':ScholiaTask note completed')

-- :ScholiaTask start on the whole note (the background code action), then :ScholiaCancel.
local before = t.buffer_text(buf)
vim.cmd('ScholiaTask start')
local bg = t.wait_progress_begin('Start deep research (background)', 10000)
vim.wait(300)
vim.cmd('ScholiaCancel')
local ended = t.wait_token_end(bg, 20000)
if not (ended or ''):find('cancel') then t.fail('cancel: ' .. tostring(ended)) end
wait_said('cancelling Start deep research (background)')
vim.wait(300)
if t.buffer_text(buf) ~= before then t.fail('the cancelled job changed the buffer') end
t.log(':ScholiaCancel ended the background job: ' .. ended)

-- :ScholiaTask cancel on a detached long task.
vim.cmd('ScholiaTask start A very long question')
t.wait(10000, function() return scholia.last_task ~= note_task end, 'the new task id')
vim.cmd('ScholiaTask cancel')
wait_said(scholia.last_task .. ' cancelled')
t.log(':ScholiaTask cancel works')

-- :checkhealth scholia
vim.cmd('checkhealth scholia')
local health = t.buffer_text()
for _, want in ipairs({ 'binary: ' .. t.bin, 'scholia 0.1.0', 'offers every command this plugin sends', 'notes indexed',
  'research LLM: valid at http://127.0.0.1', 'Ask Sonar: OpenRouter', 'background deep research: Gemini Interactions',
  'meaning: no embeddings' }) do
  if not health:find(want, 1, true) then t.fail('checkhealth lacks "' .. want .. '":\n' .. health) end
end
for secret in (os.getenv('SECRETS') or ''):gmatch('[^,]+') do
  if health:find(secret, 1, true) then t.fail('checkhealth shows a secret') end
end
if health:find('ERROR', 1, true) then t.fail('checkhealth reports an error:\n' .. health) end
t.log(':checkhealth scholia:\n' .. health)
vim.cmd('qall!')
