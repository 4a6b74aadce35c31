-- Starts `scholia lsp` from the README's vim.lsp.config, waits for indexing to end, runs
-- workspace/symbol and jumps through a wikilink with the editor's own definition command.
package.path = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/?.lua;' .. package.path
local t = require('common')

t.setup()
t.edit('Sourdough starter.md')
local done = t.wait_progress_end('Indexing vault', 30000)
t.log('indexing ended: ' .. tostring(done))
if not done or not done:match('notes') then t.fail('unexpected end message: ' .. tostring(done)) end

local symbols = t.request('workspace/symbol', { query = 'lactic acid' })
if not symbols or #symbols == 0 then t.fail('workspace/symbol returned nothing') end
if symbols[1].name ~= 'Lactic acid bacteria' then t.fail('first symbol: ' .. vim.inspect(symbols[1])) end
t.log('workspace/symbol: ' .. #symbols .. ' results, first ' .. symbols[1].name)

-- Put the cursor inside [[Wild yeast]] and jump.
local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
local row, col
for i, line in ipairs(lines) do
  local s = line:find('[[Wild yeast]]', 1, true)
  if s then row, col = i, s + 3 end
end
if not row then t.fail('no [[Wild yeast]] link in the note') end
vim.api.nvim_win_set_cursor(0, { row, col })
vim.lsp.buf.definition()
t.wait(5000, function() return vim.api.nvim_buf_get_name(0):match('Wild yeast%.md$') ~= nil end, 'the jump to Wild yeast.md')
t.log('jumped to ' .. vim.api.nvim_buf_get_name(0))

vim.cmd('qall!')
