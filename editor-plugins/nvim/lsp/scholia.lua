-- scholia's language server for Neovim 0.11+ (`:h lsp-config`): with this plugin on the
-- runtimepath, `vim.lsp.enable('scholia')` starts it on Markdown notes of a vault with no other
-- configuration. require('scholia').setup() enables it too, with its own options on top.
return {
  cmd = { 'scholia', 'lsp' },
  filetypes = { 'markdown' },
  -- A vault: Obsidian's folder or scholia's settings file. Not `.git`: a code repository is not
  -- a vault, and the server finds the vault itself when no marker is found.
  root_markers = { '.obsidian', '.scholia.toml' },
}
