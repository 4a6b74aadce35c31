-- "Start deep research (background)" on a visual selection through Neovim's own code-action
-- machinery, against the fake Gemini Interactions API: progress shows the task's status and
-- elapsed minutes (no percentages), and the summary with a wikilink to the saved report lands
-- under `## Research` in the buffer while the rest of the note is untouched. Then a research-note
-- task started with `scholia.tasks` lands in the same buffer.
package.path = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/?.lua;' .. package.path
local t = require('common')

t.setup()
t.edit('Sourdough starter.md')
t.wait_progress_end('Indexing vault', 30000)
local buf = vim.api.nvim_get_current_buf()
local before = t.buffer_text(buf)

local question = 'How long can a starter survive in the fridge without feeding?'
t.goto_line(buf, question)
vim.api.nvim_feedkeys('V', 'nx!', false)
t.code_action('Start deep research (background)')
local token = t.wait_progress_begin('Start deep research (background)', 10000)
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Esc>', true, false, true), 'nx', false)
local done = t.wait_token_end(token, 60000)
t.log('background research ended: ' .. tostring(done))
if not (done or ''):find('report saved to', 1, true) then t.fail('unexpected end: ' .. tostring(done)) end
local statuses = 0
for _, p in ipairs(t.progress) do
  if p.token == token and p.kind == 'report' then
    if (p.message or ''):find('%%') then t.fail('a percentage was invented: ' .. p.message) end
    if (p.message or ''):find('^background research running async, %d+%.%d min$') then statuses = statuses + 1 end
  end
end
if statuses == 0 then t.fail('no status progress while the task ran') end
local text = t.buffer_text(buf)
if not text:find('\n## Research\n\n### ' .. question .. '\n', 1, true) then t.fail('no subsection:\n' .. text) end
local link = text:match('%[%[(research_reports/[^%]]+)%]%]')
if not link then t.fail('no link to the report:\n' .. text) end
if vim.fn.filereadable(t.vault .. '/' .. link .. '.md') ~= 1 then t.fail('the report is not saved: ' .. link) end
if text:sub(1, #before) ~= before then t.fail('text before the new section changed') end
t.log('summary landed with a link to ' .. link)

-- A research-note task on the open note: the runner in this server writes the buffer.
local started = t.request('workspace/executeCommand', {
  command = 'scholia.tasks',
  arguments = { { action = 'start', kind = 'research-note', uri = vim.uri_from_bufnr(buf) } },
}, buf)
if not started or started.kind ~= 'research-note' then t.fail('start: ' .. vim.inspect(started)) end
t.wait_task(started.task_id, buf)
t.wait(5000, function() return t.buffer_text(buf):find('\n## Research\n\n<!%-%- scholia:research [^\n]*%-%->\n### ') ~= nil end, 'the findings')
local after = t.buffer_text(buf)
if not after:find('### ' .. question .. '\n', 1, true) then t.fail('the question subsection was lost:\n' .. after) end
if vim.bo[buf].modified ~= true then t.fail('the findings went to disk, not the buffer') end
t.log('research-note task landed in the buffer')
vim.cmd('qall!')
