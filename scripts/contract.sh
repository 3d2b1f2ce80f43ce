#!/usr/bin/env bash
# The API contract: runs schemathesis against a real `octopus serve` and its own
# /openapi.json, tenant routes with a tenant's key and admin routes with the
# admin key, with every check schemathesis has. Any failure fails the script.
#
# Called by test.sh after the Rust tests; on its own:
#   scripts/contract.sh [path/to/octopus] [examples per operation]
# The run is bounded by examples, not time, and its requests are generated
# deterministically, so a pass on one machine is a pass on another however
# fast it is. A request may take up to a minute: the largest generated imports
# are slow in a debug build while the memory worker embeds beside them.
#
# To look for what the deterministic run does not generate:
#   scripts/contract.sh --explore MINUTES [path/to/octopus] [examples]
# runs the same groups again and again with random seeds until MINUTES have
# passed, printing each seed before its run and, at the end, the seeds that
# failed (rerun one with OCTOPUS_CONTRACT_SEED=N scripts/contract.sh).
# Run it before resolving an issue that touches the API; what it finds is
# fixed and becomes a regression test.
# schemathesis is installed from PyPI into a virtualenv beside the build cache,
# pinned, so every run tests with the same version.
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
explore_minutes=""
if [ "${1:-}" = "--explore" ]; then
  explore_minutes="${2:?--explore takes a number of minutes}"
  shift 2
fi
binary="${1:-${CARGO_TARGET_DIR:-target}/debug/octopus}"
examples="${2:-40}"
venv="${OCTOPUS_CONTRACT_VENV:-$HOME/.cache/octopus/contract-venv}"

if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
  echo "Installing schemathesis $SCHEMATHESIS_VERSION into $venv..." >&2
  python3 -m venv "$venv" 2>/dev/null || {
    # Debian splits venv out of python3.
    if command -v apt-get >/dev/null 2>&1; then
      sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
      $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-venv
    fi
    python3 -m venv "$venv"
  }
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

data=$(mktemp -d)
log="$data/server.log"
admin_key="oct_contract_admin_$(date +%s)"
# Agents' models are never reached: a generated base_url is refused (no
# request leaves the machine, no name is looked up), and no provider key is
# in the environment, so turns answer 503 llm_not_configured or, for Ollama's
# default local port, 502 at once.
cat >"$data/octopus.toml" <<'TOML'
[llm]
max_retries = 0
timeout_secs = 5
other_base_urls = "none"
# Generated webhooks are registered but never called: no server here sends
# deliveries (nor does the queue's other work, which no check reads).
[worker]
memory_worker = false
TOML
env -u OPENAI_API_KEY -u AZURE_OPENAI_API_KEY -u ANTHROPIC_API_KEY \
  "$binary" serve --config "$data/octopus.toml" --listen 127.0.0.1:0 --data-dir "$data/data" \
  --admin-key "$admin_key" --log warn >"$data/stdout" 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 1 100); do
  url=$(sed -n 's/^Octopus listening on //p' "$data/stdout" | head -1)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "${url:-}" ] || { echo "octopus did not start:" >&2; cat "$log" >&2; exit 1; }

json='Content-Type: application/json'
tenant=$(curl -sf -X POST "$url/v1/tenants" -H "Authorization: Bearer $admin_key" -H "$json" \
  -d '{"name": "contract"}' | jq -r .id)
key=$(curl -sf -X POST "$url/v1/tenants/$tenant/keys" -H "Authorization: Bearer $admin_key" -H "$json" \
  -d '{"name": "contract"}' | jq -r .key)

# Run from the scratch folder: schemathesis keeps a cache where it runs.
# Deterministic, or with the seed in $seed when one is set.
seed="${OCTOPUS_CONTRACT_SEED:-}"
run() {
  local generation=(--generation-deterministic)
  [ -n "$seed" ] && generation=(--seed "$seed")
  (cd "$data" && "$venv/bin/schemathesis" run "$url/openapi.json" --checks all --no-color \
    "${generation[@]}" --max-examples "$examples" \
    --request-timeout 60 \
    --phases "${OCTOPUS_CONTRACT_PHASES:-examples,coverage,fuzzing,stateful}" --workers 1 "$@")
}

# Every group of operations, with what each must hold; 1 when one failed.
run_groups() {
  local status=0
  # A dump's body is JSON Lines, which schemathesis cannot write and JSON
  # Schema cannot describe (each line's type, their order, the end record's
  # count): the import is tested by crates/octopus-server/tests/it/dumps.rs.
  echo "== contract: tenant routes" >&2
  run -H "Authorization: Bearer $key" --exclude-tag admin --exclude-operation-id take_turn \
    --exclude-operation-id chat_completion \
    --exclude-operation-id search_messages --exclude-operation-id list_episodes \
    --exclude-operation-id recall \
    --exclude-operation-id propose_procedure --exclude-operation-id import_dump \
    --exclude-operation-id create_procedure --exclude-operation-id update_procedure \
    --exclude-operation-id update_agent --exclude-operation-id create_webhook \
    --exclude-operation-id import_chats || status=1
  # A time window's `from` must not be later than its `to`, which JSON Schema
  # cannot state across two fields: a schema-valid window may rightly be a
  # 422 naming `from`. Every other check holds.
  echo "== contract: time windows" >&2
  run -H "Authorization: Bearer $key" --include-operation-id search_messages \
    --include-operation-id list_episodes --include-operation-id recall \
    --exclude-checks positive_data_acceptance || status=1
  # An agent's patch is checked once merged with the stored agent (Azure's
  # endpoint and deployment may be stored or patched): a schema-valid patch
  # may rightly be a 422 naming the field. Every other check holds.
  echo "== contract: agent patches" >&2
  run -H "Authorization: Bearer $key" --include-operation-id update_agent \
    --include-operation-id create_agent --exclude-checks positive_data_acceptance || status=1
  # A trigger pattern must compile as a Rust regex, which JSON Schema cannot
  # state: a schema-valid pattern may rightly be a 422. Every other check holds.
  echo "== contract: procedures, trigger patterns" >&2
  run -H "Authorization: Bearer $key" --include-operation-id create_procedure \
    --include-operation-id update_procedure --exclude-checks positive_data_acceptance || status=1
  # A webhook's URL must parse, and must not name an internal address (the
  # server's [webhooks] destinations), which JSON Schema cannot state: a
  # schema-valid URL may rightly be a 422 naming `url`. Every other check holds.
  echo "== contract: webhooks, endpoint URLs" >&2
  run -H "Authorization: Bearer $key" --include-operation-id create_webhook \
    --exclude-checks positive_data_acceptance || status=1
  # A chat export's conversations must hold what their service writes (a
  # ChatGPT conversation's `current_node` one of its `mapping`'s nodes, a
  # message's author), which the body's schema, an array of objects, cannot
  # state: a schema-valid file may rightly be a 422 naming the conversation.
  # Every other check holds.
  echo "== contract: chat exports" >&2
  run -H "Authorization: Bearer $key" --include-operation-id import_chats \
    --exclude-checks positive_data_acceptance || status=1
  # With no model reachable, a turn's documented answer is a 502 or 503
  # naming the provider: every other check still holds for it.
  echo "== contract: turns and learned procedures, no model reachable" >&2
  run -H "Authorization: Bearer $key" --include-operation-id take_turn \
    --include-operation-id propose_procedure \
    --exclude-checks not_a_server_error || status=1
  # A chat completion in OpenAI's shape also names an agent in `model` and
  # must end with the user's message or tool results, which JSON Schema
  # cannot state: a schema-valid request may rightly be a 404 or a 422.
  echo "== contract: OpenAI chat completions, no model reachable" >&2
  run -H "Authorization: Bearer $key" --include-operation-id chat_completion \
    --exclude-checks not_a_server_error,positive_data_acceptance || status=1
  echo "== contract: admin routes" >&2
  run -H "Authorization: Bearer $admin_key" --include-tag admin || status=1
  return $status
}

status=0
if [ -n "$explore_minutes" ]; then
  deadline=$(( $(date +%s) + explore_minutes * 60 ))
  failed=()
  while [ "$(date +%s)" -lt "$deadline" ]; do
    seed=$(python3 -c 'import random; print(random.randrange(1, 2**31))')
    echo "== explore: seed $seed" >&2
    run_groups || { failed+=("$seed"); status=1; }
  done
  if [ ${#failed[@]} -gt 0 ]; then
    echo "== explore: failing seeds: ${failed[*]}" >&2
  else
    echo "== explore: no failure in $explore_minutes minutes" >&2
  fi
else
  run_groups || status=1
fi
if grep -q "panicked" "$log"; then
  echo "the server panicked:" >&2
  grep -A5 panicked "$log" >&2
  status=1
fi
exit $status
