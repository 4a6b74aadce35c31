-- Nothing starts until require('scholia').setup() (lazy.nvim calls it for `opts`).
if vim.fn.has('nvim-0.11') == 0 then
  vim.notify('scholia: needs Neovim 0.11 or newer', vim.log.levels.WARN)
end
