-- Selects a question line in visual mode, runs "Deep search selection" through Neovim's own
-- code-action machinery (the fake Gemini CLI answers), and checks that the result lands under
-- `## Research` as `### <question>` while the rest of the note is untouched.
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
if vim.api.nvim_get_mode().mode ~= 'V' then t.fail('not in visual line mode') end
t.code_action('Deep search selection')
local token = t.wait_progress_begin('Deep search selection', 10000)
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Esc>', true, false, true), 'nx', false)
local done = t.wait_token_end(token, 60000)
t.log('deep search ended: ' .. tostring(done))
if done ~= 'verified after 2 rounds, 3 sources' then t.fail('unexpected end: ' .. tostring(done)) end
local text = t.buffer_text(buf)
local heading = '\n## Research\n\n### ' .. question .. '\n'
if not text:find(heading, 1, true) then t.fail('no subsection for the question:\n' .. text) end
if not text:find('verified (gemini-cli', 1, true) then t.fail('no verification status') end
if text:sub(1, #before) ~= before then t.fail('text before the new section changed') end
t.log('subsection landed')
vim.cmd('qall!')
