#!/usr/bin/env bash
# Checks that the compiled programs the test command runs, and that no one here
# compiles from source, run on an x86-64 CPU without AVX-512: a registry's
# build made on a newer machine can carry instructions an older one lacks,
# and dies there with "Illegal instruction".
#
#   scripts/cpu-baseline.sh
#
# Each program that can run under QEMU's user-mode emulator runs there on
# `-cpu max`, which on QEMU's own code generator is a CPU with AVX2 and FMA
# and no AVX-512 (any AVX-512 instruction stops the program with SIGILL):
#   - the Qdrant server the Qdrant suite starts (OCTOPUS_TEST_QDRANT_BIN):
#     a 384-d collection with an HNSW index, filled and searched;
#   - node-llama-cpp with the small model the answer harness uses: one reply.
# The test database is checked by reading its machine code instead (Debian's
# postmaster does not start under the emulator): every function of its
# programs and libraries that uses AVX registers must be a run-time CPU
# dispatch variant. Chromium and wrk are Debian's builds, made for the
# baseline x86-64 CPU. Needs qemu-user (installed with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

cache="$HOME/.cache/octopus"
failures=0
report() { printf '%-10s %s\n' "$1" "$2"; [ "$1" = "FAIL" ] && failures=$((failures + 1)); return 0; }

command -v qemu-x86_64 >/dev/null 2>&1 || {
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq qemu-user >&2
}

# The test database: every program and library of the prepared PostgreSQL
# (Debian's, with pgvector built here), read for functions that use AVX (ymm)
# or AVX-512 (zmm, mask registers) registers outside a run-time dispatch
# variant (pgvector's `.fma` clones and its F16C and AVX-512 popcount paths).
pg_bin=$(./scripts/postgres.sh build)
pg_tree=$(cd "$pg_bin/.." && pwd)
wide_functions=0
undispatched=""
while IFS= read -r file; do
  wide=$(objdump -d --no-show-raw-insn "$file" 2>/dev/null | awk '/>:$/ { f = $2 } /%ymm|%zmm|%k[1-7]/ { print f }' | sort -u)
  [ -z "$wide" ] && continue
  wide_functions=$((wide_functions + $(echo "$wide" | grep -c .)))
  outside=$(echo "$wide" | grep -v -E '\.(fma|avx[0-9a-z_]*)>:|F16c>:|Avx512Popcount>:' | grep . || true)
  [ -n "$outside" ] && undispatched="$undispatched $(basename "$file"):$(echo "$outside" | tr '\n' ' ')"
done < <(find "$pg_tree" -type f \( -name '*.so' -o -perm -u+x \) -exec sh -c 'head -c 4 "$1" | grep -q ELF' _ {} \; -print)
if [ -z "$undispatched" ]; then
  report ok "PostgreSQL and pgvector: $wide_functions functions use AVX registers, each a run-time dispatch variant"
else
  report FAIL "PostgreSQL and pgvector: AVX outside run-time dispatch in$undispatched"
fi

# Qdrant.
qdrant="${OCTOPUS_TEST_QDRANT_BIN:-$(ls "$cache"/qdrant/qdrant-* 2>/dev/null | head -n 1)}"
if [ -x "$qdrant" ]; then
  dir=$(mktemp -d)
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  (cd "$dir" && QDRANT__SERVICE__HOST=127.0.0.1 QDRANT__SERVICE__HTTP_PORT=$port QDRANT__SERVICE__GRPC_PORT=$((port + 1)) \
    QDRANT__STORAGE__STORAGE_PATH="$dir/storage" QDRANT__STORAGE__SNAPSHOTS_PATH="$dir/snapshots" \
    QDRANT__TELEMETRY_DISABLED=true exec qemu-x86_64 -cpu max "$qdrant" >"$dir/log" 2>&1) &
  pid=$!
  if python3 - "$port" <<'EOF'
import json, random, sys, time, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
def call(method, path, body=None):
    request = urllib.request.Request(base + path, method=method, headers={"content-type": "application/json"},
                                     data=None if body is None else json.dumps(body).encode())
    return json.load(urllib.request.urlopen(request, timeout=120))
for _ in range(240):
    try:
        urllib.request.urlopen(base + "/readyz", timeout=1); break
    except OSError:
        time.sleep(0.5)
call("PUT", "/collections/c", {"vectors": {"size": 384, "distance": "Cosine"},
                               "hnsw_config": {"m": 16}, "optimizers_config": {"indexing_threshold": 10}})
rng = random.Random(7)
points = [{"id": i, "vector": [rng.uniform(-1, 1) for _ in range(384)], "payload": {"u": i % 3}} for i in range(2000)]
for start in range(0, len(points), 500):
    call("PUT", "/collections/c/points?wait=true", {"points": points[start:start + 500]})
for _ in range(240):
    if call("GET", "/collections/c")["result"]["status"] == "green": break
    time.sleep(0.5)
found = call("POST", "/collections/c/points/query",
             {"query": points[5]["vector"], "limit": 3, "filter": {"must": [{"key": "u", "match": {"value": 2}}]}})
assert found["result"]["points"][0]["id"] == 5, found
EOF
  then report ok "Qdrant ($(basename "$qdrant")): HNSW built and searched on an emulated CPU without AVX-512"
  else report FAIL "Qdrant ($(basename "$qdrant")): see $dir/log"; fi
  kill "$pid" 2>/dev/null || true
else
  report "NOT RUN" "Qdrant: no binary (OCTOPUS_TEST_QDRANT_BIN, or .ci/run's unpacked copy in $cache/qdrant)"
fi

# node-llama-cpp with the small model.
model="$cache/models/gemma-3-270m-q4_k_m.gguf"
if [ -f "$model" ] && [ -d "$cache/llm-node/node_modules" ]; then
  log=$(mktemp)
  qemu-x86_64 -cpu max "$(command -v node)" crates/octopus-bench/tests/small_model_server.mjs \
    "$model" "$cache/llm-node/node_modules" >"$log" 2>/dev/null &
  pid=$!
  url=""
  for _ in $(seq 1 300); do
    url=$(sed -n 's/^listening on //p' "$log")
    [ -n "$url" ] && break
    sleep 1
  done
  if [ -n "$url" ] && curl -sf --max-time 300 "$url/chat/completions" -H 'content-type: application/json' \
    -d '{"model":"small","messages":[{"role":"user","content":"Say hello."}],"max_tokens":8}' | grep -q '"content"'; then
    report ok "node-llama-cpp: the small model answered on an emulated CPU without AVX-512"
  else
    report FAIL "node-llama-cpp: no answer (see $log)"
  fi
  kill "$pid" 2>/dev/null || true
else
  report "NOT RUN" "node-llama-cpp: not installed yet (scripts/test.sh installs it)"
fi
[ "$failures" -eq 0 ]
