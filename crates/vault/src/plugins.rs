//! What an Obsidian plugin would run if it found it in a note: code blocks of languages a
//! plugin registers (Dataview, DataviewJS, queries, buttons) and inline queries.

/// Fenced code languages written as they are: languages with no plugin that runs them. Any
/// other info string (`dataview`, `dataviewjs`, `query`, `button`, …) becomes `text`.
#[rustfmt::skip]
const CODE_LANGUAGES: &[&str] = &[
    "", "asm", "awk", "bash", "bat", "c", "c++", "clj", "clojure", "cmake", "cmd", "conf",
    "console", "cpp", "cs", "csharp", "css", "csv", "dart", "diff", "docker", "dockerfile",
    "elixir", "elm", "erlang", "ex", "f#", "fish", "fortran", "fsharp", "go", "golang", "gql",
    "graphql", "groovy", "h", "haskell", "hcl", "hpp", "hs", "html", "http", "ini", "java",
    "javascript", "jinja", "jl", "js", "json", "json5", "jsonc", "jsx", "julia", "kotlin", "kt",
    "latex", "less", "lisp", "log", "lua", "make", "makefile", "markdown", "matlab", "md", "mjs",
    "nginx", "nim", "nix", "objc", "ocaml", "pascal", "patch", "perl", "php", "pl", "plain",
    "plaintext", "powershell", "prolog", "properties", "proto", "protobuf", "ps1", "py", "python",
    "python3", "r", "racket", "rb", "regex", "ruby", "rs", "rust", "sass", "scala", "scheme",
    "scss", "sed", "sh", "shell", "sol", "solidity", "sql", "svelte", "swift", "tex", "text", "tf",
    "toml", "ts", "tsv", "tsx", "txt", "typescript", "vb", "verilog", "vhdl", "vim", "vue", "wasm",
    "xml", "yaml", "yml", "zig", "zsh",
];

/// Whether a fence's info string names a language written as is.
pub(crate) fn plain_language(info: &str) -> bool {
    let lang = info.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    CODE_LANGUAGES.contains(&lang.as_str())
}

/// Whether inline code is a Dataview query (`= …`) or Dataview JS (`$= …`).
pub(crate) fn inline_query(code: &str) -> bool {
    let t = code.trim_start();
    t.starts_with('=') || t.starts_with("$=")
}
