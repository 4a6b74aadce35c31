-- Runs "Research this note" from a code action against the loopback fakes, edits another line
-- while it runs, and checks that the section lands and the edit survives; then cancels a deep
-- run and checks that the buffer is exactly as it was.
package.path = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/?.lua;' .. package.path
local t = require('common')

t.setup()
t.edit('Sourdough starter.md')
t.wait_progress_end('Indexing vault', 30000)
local buf = vim.api.nvim_get_current_buf()

-- 1. Research, typing meanwhile.
t.code_action('Research this note')
local token = t.wait_progress_begin('Research this note', 10000)
t.log('research began: ' .. tostring(token))
local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
for i, line in ipairs(lines) do
  if line == '# Sourdough starter' then
    vim.api.nvim_buf_set_lines(buf, i - 1, i, false, { '# Sourdough starter (typed during research)' })
  end
end
local done = t.wait_token_end(token, 60000)
t.log('research ended: ' .. tostring(done))
if not done or done:match('^failed') then t.fail('research failed: ' .. tostring(done)) end
local text = t.buffer_text(buf)
if not text:find('# Sourdough starter (typed during research)', 1, true) then t.fail('the edit made during the run was lost') end
if not text:find('\n## Research\n\n<!%-%- scholia:research [^\n]*%-%->\n### ') then t.fail('no Research section in the buffer:\n' .. text) end
if not text:find('](http://127.0.0.1:', 1, true) then t.fail('no web citation in the section') end
t.log('section landed with ' .. select(2, text:gsub('\n', '\n')) .. ' lines in the buffer')

-- 2. A cancelled run leaves the buffer as it was.
local before = t.buffer_text(buf)
local seen = { [token] = true }
t.code_action('Research this note (deep)')
local deep = t.wait_progress_begin('Research this note (deep)', 10000, seen)
t.client():notify('window/workDoneProgress/cancel', { token = deep })
local cancelled = t.wait_token_end(deep, 20000)
t.log('deep run ended: ' .. tostring(cancelled))
if cancelled ~= 'cancelled; the note is unchanged' then t.fail('unexpected end: ' .. tostring(cancelled)) end
vim.wait(500)
if t.buffer_text(buf) ~= before then t.fail('the cancelled run changed the buffer') end

vim.cmd('qall!')
