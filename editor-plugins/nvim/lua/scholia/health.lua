-- :checkhealth scholia — the binary and its version, whether it offers what this plugin
-- sends, the vault and its index, and which providers are configured. Never prints a secret:
-- the server reports keys only as set or not, and URLs without credentials.
local M = {}

local function run(argv)
  local ok, obj = pcall(function() return vim.system(argv, { text = true }):wait(10000) end)
  if not ok or obj.code ~= 0 then return nil end
  return obj.stdout
end

function M.check()
  local h = vim.health
  local scholia = require('scholia')
  h.start('scholia: Neovim and the binary')
  if vim.fn.has('nvim-0.11') == 1 then
    h.ok('Neovim ' .. tostring(vim.version()))
  else
    h.error('Neovim 0.11 or newer is needed (vim.lsp.config)')
  end
  local cmd = scholia.config.cmd
  local path = vim.fn.exepath(cmd[1])
  if path == '' then
    h.error('binary not found: ' .. cmd[1], {
      'cargo install --path /path/to/scholia',
      "or require('scholia').setup({ cmd = { '/path/to/scholia', 'lsp' } })",
    })
  else
    local version = run({ path, '--version' })
    h.ok('binary: ' .. path .. ' (' .. vim.trim(version or 'version unknown') .. ')')
    local described = run({ path, 'lsp', '--describe' })
    local ok, d = pcall(vim.json.decode, described or '')
    if not ok or type(d) ~= 'table' then
      h.warn('`' .. path .. ' lsp --describe` failed: the binary may be older than this plugin')
    else
      local offered = {}
      for _, c in ipairs(d.commands) do offered[c] = true end
      local missing = {}
      for _, c in pairs(scholia.commands) do
        if not offered[c] then table.insert(missing, c) end
      end
      if #missing == 0 then
        h.ok('the server offers every command this plugin sends (' .. #d.commands .. ')')
      else
        table.sort(missing)
        h.error('the server lacks: ' .. table.concat(missing, ', '), { 'update the scholia binary' })
      end
    end
  end
  if scholia.config.env then
    local names = vim.tbl_keys(scholia.config.env)
    table.sort(names)
    h.info('environment set by setup(): ' .. table.concat(names, ', ') .. ' (values not shown)')
  end

  h.start('scholia: vault and index')
  local client = vim.lsp.get_clients({ name = 'scholia' })[1]
  if not client then
    h.warn('no scholia language server is running', { 'open a Markdown note inside a vault (a folder with .obsidian or .scholia.toml, or a folder of notes)' })
    return
  end
  h.ok('language server running (client ' .. client.id .. '), root ' .. tostring(client.root_dir))
  local resp = client:request_sync('workspace/executeCommand', { command = scholia.commands.status, arguments = {} }, 10000)
  if not resp or resp.err or not resp.result then
    h.error('the server did not answer scholia.status: ' .. vim.inspect(resp and resp.err))
    return
  end
  local s = resp.result
  local v = s.vault
  if v.state == 'ready' then
    h.ok(string.format('vault %s: %d notes indexed (%s)', v.root, v.notes,
      v.index_writer and 'this server keeps the index' or 'following another process that keeps the index'))
    h.info('index: ' .. v.index_dir)
  else
    h.warn('vault: ' .. (v.message or v.state))
  end

  h.start('scholia: providers')
  local p = s.providers
  if p.error then
    h.error('configuration: ' .. p.error)
    return
  end
  if p.untrusted then h.warn(p.untrusted, { 'run `scholia trust` in the vault to use its .scholia.toml' }) end
  if p.llm and p.llm ~= vim.NIL then
    h.ok('research LLM: ' .. p.llm.model .. ' at ' .. p.llm.base_url .. (p.llm.key and ' (key set)' or ' (no key)'))
  else
    h.info('research LLM: not configured — research runs offline (vault only); set SCHOLIA_LLM_BASE_URL and SCHOLIA_LLM_MODEL')
  end
  h.ok('web search: ' .. p.search.provider .. ' at ' .. p.search.url)
  if p.sonar and p.sonar ~= vim.NIL then
    h.ok('Ask Sonar: OpenRouter at ' .. p.sonar.base_url .. ' (key set)')
  else
    h.info('Ask Sonar: not configured; set OPENROUTER_API_KEY')
  end
  if p.gemini_api and p.gemini_api ~= vim.NIL then
    h.ok('background deep research: Gemini Interactions at ' .. p.gemini_api.base_url .. ' (key set)')
  else
    h.info('background deep research: no GEMINI_API_KEY — background tasks run scholia\'s own deep search')
  end
  local e = p.embeddings
  if e and e ~= vim.NIL then
    if e.problem and e.problem ~= vim.NIL then
      h.warn('meaning: ' .. e.problem)
    elseif e.fetched == false then
      h.info('meaning: ' .. e.model .. ' — not fetched yet; the server fetches it in the background')
    else
      local n = v.vectors
      local reads = ''
      local r = e.reads
      if r and r ~= vim.NIL then
        reads = string.format('; %d dimensions, %d tokens a text', r.dimensions, r.max_tokens)
        for _, kind in ipairs({ 'query', 'document' }) do
          local prompt = r[kind .. '_prompt']
          if prompt and prompt ~= vim.NIL then
            reads = reads .. string.format('; %s prompt %q', kind, prompt)
          end
        end
      end
      h.ok('meaning: ' .. e.model .. ((n and n ~= vim.NIL) and string.format(' (%d notes have vectors)', n) or '') .. reads)
    end
  else
    h.info('meaning: no embeddings — search and related notes go by words; set SCHOLIA_EMBED_MODEL_PATH, SCHOLIA_EMBED_HUB_MODEL or SCHOLIA_EMBED_BASE_URL')
  end
  local gemini = vim.fn.exepath(p.gemini_cli)
  if gemini ~= '' then
    h.ok('deep search: Gemini CLI ' .. gemini)
  else
    h.info('deep search: Gemini CLI `' .. p.gemini_cli .. '` not found — deep search uses the research LLM')
  end
  if #s.jobs > 0 then
    for _, j in ipairs(s.jobs) do
      h.info(string.format('running: %s (%.1f s)', j.title, j.elapsed_ms / 1000))
    end
  end
end

return M
