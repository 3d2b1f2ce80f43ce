# Sourced by test.sh: the official clients the door tests run
# (crates/octopus-cli/tests/clients/), installed once from the registries,
# pinned, and cached beside the build cache:
#   - PyPI `mcp` and `openai` in a virtualenv (OCTOPUS_TEST_CLIENTS_VENV);
#   - npm `openai` in a node_modules folder (OCTOPUS_TEST_NODE_MODULES).
# openai 6.49.0 is the last npm release that runs on Node 20 and older
# (7.x asks for Node 22).

MCP_PY_VERSION=2.3.0
OPENAI_PY_VERSION=3.57.0
OPENAI_NPM_VERSION=6.49.0

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
  local wanted="mcp==$MCP_PY_VERSION openai==$OPENAI_PY_VERSION"
  if [ "$(cat "$venv/.pinned" 2>/dev/null)" != "$wanted" ]; then
    echo "Installing the Python clients ($wanted) into $venv..." >&2
    rm -rf "$venv"
    python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv; python3 -m venv "$venv"; }
    # shellcheck disable=SC2086 # two requirements, split on purpose
    "$venv/bin/pip" install --quiet --disable-pip-version-check $wanted
    echo "$wanted" >"$venv/.pinned"
  fi
  command -v npm >/dev/null 2>&1 || apt_install nodejs npm
  local node_dir="$cache/clients-node"
  if [ "$(cat "$node_dir/.pinned" 2>/dev/null)" != "openai@$OPENAI_NPM_VERSION" ]; then
    echo "Installing the npm client openai@$OPENAI_NPM_VERSION into $node_dir..." >&2
    rm -rf "$node_dir"
    mkdir -p "$node_dir"
    (cd "$node_dir" && npm install --silent --no-audit --no-fund --no-save "openai@$OPENAI_NPM_VERSION" >/dev/null)
    echo "openai@$OPENAI_NPM_VERSION" >"$node_dir/.pinned"
  fi
  export OCTOPUS_TEST_CLIENTS_VENV="$venv"
  export OCTOPUS_TEST_NODE_MODULES="$node_dir/node_modules"
}
