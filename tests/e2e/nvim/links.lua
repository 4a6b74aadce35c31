-- The editor half in real Neovim, through its own LSP commands: references of a note, a
-- link that leads nowhere as a diagnostic, a rename across notes (the file renamed, every
-- link rewritten), and the research lens (made, then stale once the note changes).
package.path = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/?.lua;' .. package.path
local t = require('common')

t.setup()
t.edit('Microbes/Lactic acid bacteria.md')
t.wait_progress_end('Indexing vault', 30000)
local lab = vim.api.nvim_get_current_buf()

-- References of the note from its title: the two notes linking to it, in the quickfix list.
t.goto_line(lab, 'Lactic acid bacteria (LAB)')
vim.api.nvim_win_set_cursor(0, { 5, 3 }) -- `# Lactic acid bacteria`
vim.lsp.buf.references({ includeDeclaration = false })
t.wait(5000, function() return #vim.fn.getqflist() >= 2 end, 'references in the quickfix list')
local files = {}
for _, item in ipairs(vim.fn.getqflist()) do files[vim.fn.bufname(item.bufnr):match('[^/]+$')] = true end
if not (files['Sourdough starter.md'] and files['Wild yeast.md']) then
  t.fail('references: ' .. vim.inspect(vim.fn.getqflist()))
end
t.log('references: ' .. #vim.fn.getqflist())
vim.cmd('cclose')

-- A link to a note that does not exist: a diagnostic once the text settles.
t.edit('Sourdough starter.md')
local buf = vim.api.nvim_get_current_buf()
vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '', 'Compare with [[Tempeh starter]].' })
t.wait(5000, function()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.message:find('no note named `Tempeh starter`', 1, true) then return true end
  end
  return false
end, 'the unresolved-link diagnostic')
t.log('diagnostic: ' .. vim.diagnostic.get(buf)[1].message)

-- Rename the note behind [[Wild yeast]] from the link: the file moves, both linking notes
-- are rewritten (buffers Neovim loads for the edit), the title follows.
local row = t.goto_line(buf, '[[Wild yeast]]')
local col = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1]:find('[[Wild yeast]]', 1, true) + 3
vim.api.nvim_win_set_cursor(0, { row, col })
vim.lsp.buf.rename('Wild yeasts')
t.wait(5000, function() return t.buffer_text(buf):find('[[Wild yeasts]]', 1, true) ~= nil end, 'the link rewritten in the buffer')
vim.cmd('silent! wall')
local moved = t.vault .. '/Microbes/Wild yeasts.md'
t.wait(5000, function() return vim.uv.fs_stat(moved) ~= nil end, 'the renamed file')
if vim.uv.fs_stat(t.vault .. '/Microbes/Wild yeast.md') then t.fail('the old file is still there') end
local renamed = table.concat(vim.fn.readfile(moved), '\n')
if not renamed:find('# Wild yeasts', 1, true) then t.fail('title not renamed:\n' .. renamed) end
t.log('renamed: Microbes/Wild yeasts.md')

-- The research lens: research the note, then the lens says when and how; an edit above the
-- section makes it stale.
t.code_action('Research this note')
t.wait_progress_end('Research this note', 60000)
local function lens_titles()
  vim.lsp.codelens.refresh({ bufnr = buf })
  local titles = {}
  vim.wait(300)
  for _, l in ipairs(vim.lsp.codelens.get(buf)) do
    if l.command then table.insert(titles, l.command.title) end
  end
  return titles
end
local found
t.wait(5000, function()
  for _, title in ipairs(lens_titles()) do
    if title:find('^Researched ') then found = title return true end
  end
  return false
end, 'the research lens')
if not found:find('offline', 1, true) or found:find('stale', 1, true) then t.fail('lens: ' .. found) end
t.log('lens: ' .. found)
vim.api.nvim_buf_set_lines(buf, 7, 7, false, { 'A line the owner adds above the research.' })
t.wait(5000, function()
  for _, title in ipairs(lens_titles()) do
    if title:find('stale', 1, true) then found = title return true end
  end
  return false
end, 'the lens to say stale')
t.log('lens: ' .. found)

vim.cmd('qall!')
