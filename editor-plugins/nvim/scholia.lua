-- scholia for Neovim 0.11+: put this file in ~/.config/nvim/plugin/ (or copy its lines into
-- your init.lua). `scholia` must be on PATH (cargo install --path /path/to/scholia).
vim.lsp.config('scholia', {
  cmd = { 'scholia', 'lsp' },
  filetypes = { 'markdown' },
  -- The vault root: the nearest folder holding one of these.
  root_markers = { '.obsidian', '.scholia.toml', '.git' },
  -- Everything here reaches the server as initializationOptions, e.g. { vault = '~/notes' }.
  init_options = {},
})
vim.lsp.enable('scholia')
