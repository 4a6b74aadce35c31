//! Every environment variable scholia reads, defined once (for `--describe`, plugins, docs).

/// Every environment variable scholia reads, for documentation and `--help`.
pub const ENV_VARS: &[(&str, &str)] = &[
    (
        "SCHOLIA_LLM_BASE_URL",
        "research LLM: base URL of an OpenAI-compatible API (…/v1)",
    ),
    (
        "SCHOLIA_LLM_API_KEY",
        "research LLM: API key (optional for local servers)",
    ),
    ("SCHOLIA_LLM_MODEL", "research LLM: model name"),
    (
        "SCHOLIA_LLM_CONTEXT_TOKENS",
        "research LLM: context window in tokens, when the server does not say",
    ),
    (
        "FIREWORKS_BASE_URL",
        "research LLM via Fireworks (base URL; defaults to Fireworks' API)",
    ),
    ("FIREWORKS_API_KEY", "research LLM via Fireworks: API key"),
    ("FIREWORKS_MODEL", "research LLM via Fireworks: model"),
    ("RESEARCH_MODEL", "research LLM: model (after SCHOLIA_LLM_MODEL)"),
    (
        "OPENAI_API_KEY",
        "research LLM via OpenAI (model defaults to gpt-4o-mini)",
    ),
    ("OPENROUTER_API_KEY", "Sonar tiers (`ask`) via OpenRouter"),
    (
        "GEMINI_API_KEY",
        "background deep research via the Gemini Interactions API (`tasks start`)",
    ),
    ("GEMINI_API_BASE_URL", "Gemini Interactions base URL"),
    (
        "SCHOLIA_TASKS_POLL_MS",
        "milliseconds between polls of a background task",
    ),
    (
        "GEMINI_DEEP_RESEARCH_AGENT",
        "the Gemini deep-research agent of background tasks",
    ),
    ("OPENROUTER_BASE_URL", "OpenRouter base URL"),
    (
        "GEMINI_CLI",
        "deep_search: the Gemini CLI executable (default `gemini`)",
    ),
    ("GEMINI_MODEL", "deep_search: model for the search rounds"),
    ("GEMINI_CORRECTION_MODEL", "deep_search: model for JSON correction"),
    (
        "DEEP_SEARCH_MAX_ITERATIONS",
        "deep_search: rounds at most (default 5, at least 2)",
    ),
    (
        "SCHOLIA_EMBED_MODEL_PATH",
        "embeddings: a sentence-transformers model directory run in-process (e.g. all-MiniLM-L6-v2)",
    ),
    (
        "SCHOLIA_EMBED_HUB_MODEL",
        "embeddings: owner/name[@revision] of a sentence-transformers model on a hub, fetched into the cache on first use",
    ),
    (
        "SCHOLIA_EMBED_HUB_URL",
        "embeddings: the hub SCHOLIA_EMBED_HUB_MODEL is fetched from (default https://huggingface.co)",
    ),
    (
        "SCHOLIA_EMBED_BASE_URL",
        "embeddings: base URL of an OpenAI-compatible API (…/v1; Ollama, llama.cpp, OpenAI)",
    ),
    ("SCHOLIA_EMBED_MODEL", "embeddings: the endpoint's model"),
    (
        "SCHOLIA_EMBED_API_KEY",
        "embeddings: the endpoint's key (optional for local servers)",
    ),
    (
        "SCHOLIA_EMBED_QUERY_PROMPT",
        "embeddings: put before a question (e.g. \"search_query: \" for nomic-embed-text), in place of the model's own",
    ),
    (
        "SCHOLIA_EMBED_DOCUMENT_PROMPT",
        "embeddings: put before a note (e.g. \"search_document: \"), in place of the model's own",
    ),
    (
        "SCHOLIA_TASKS_DATABASE_URL",
        "background tasks: postgres://… a task store a team's hosts share (default: SQLite in the data directory)",
    ),
    ("SCHOLIA_SEARCH", "web search: duckduckgo (default) or searxng:URL"),
    ("SCHOLIA_DUCKDUCKGO_URL", "web search: DuckDuckGo base URL"),
    (
        "SCHOLIA_ALLOW_PRIVATE_HOSTS",
        "1 lets page fetches reach private addresses (tests only)",
    ),
    ("SCHOLIA_CONFIG_DIR", "configuration directory"),
    ("SCHOLIA_DATA_DIR", "data directory"),
    ("SCHOLIA_CACHE_DIR", "index directory"),
    ("SCHOLIA_LOG", "log filter for stderr"),
];
