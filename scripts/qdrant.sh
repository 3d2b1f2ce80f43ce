#!/usr/bin/env bash
# A throwaway Qdrant server, for tests: started from a `qdrant` binary you
# have, on free ports, with its storage in DIR.
#
#   scripts/qdrant.sh start DIR   start one; print its REST URL (gRPC is the
#                                 next port); its process id goes to DIR/qdrant.pid
#   scripts/qdrant.sh stop DIR    stop it and delete DIR
#
# No package registry ships a Qdrant server, so nothing here installs one:
# the binary is the one OCTOPUS_TEST_QDRANT_BIN names, or `qdrant` on PATH
# (a release from Qdrant, 1.16 or later; tested with 1.18.0).
set -euo pipefail

binary() {
  local bin="${OCTOPUS_TEST_QDRANT_BIN:-$(command -v qdrant || true)}"
  [ -n "$bin" ] && [ -x "$bin" ] || {
    echo "no Qdrant binary: set OCTOPUS_TEST_QDRANT_BIN, or put \`qdrant\` on PATH" >&2
    exit 1
  }
  echo "$bin"
}

# A free port whose successor is free too (REST, then gRPC).
free_pair() {
  python3 - <<'PY'
import socket
while True:
    rest = socket.socket()
    rest.bind(("127.0.0.1", 0))
    port = rest.getsockname()[1]
    grpc = socket.socket()
    try:
        grpc.bind(("127.0.0.1", port + 1))
    except OSError:
        continue
    finally:
        grpc.close()
        rest.close()
    print(port)
    break
PY
}

case "${1:-}" in
  start)
    dir="${2:?usage: scripts/qdrant.sh start DIR}"
    bin=$(binary)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    port=$(free_pair)
    # Qdrant marks its working directory with a file of its own: let that be
    # DIR, never the caller's.
    cd "$dir"
    QDRANT__SERVICE__HOST=127.0.0.1 QDRANT__SERVICE__HTTP_PORT="$port" \
      QDRANT__SERVICE__GRPC_PORT=$((port + 1)) QDRANT__TELEMETRY_DISABLED=true \
      QDRANT__STORAGE__STORAGE_PATH="$dir/storage" QDRANT__STORAGE__SNAPSHOTS_PATH="$dir/snapshots" \
      nohup "$bin" >"$dir/qdrant.log" 2>&1 &
    echo $! >"$dir/qdrant.pid"
    for _ in $(seq 1 200); do
      if curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
        echo "http://127.0.0.1:$port"
        exit 0
      fi
      sleep 0.1
    done
    echo "Qdrant did not start; see $dir/qdrant.log" >&2
    exit 1
    ;;
  stop)
    dir="${2:?usage: scripts/qdrant.sh stop DIR}"
    kill "$(cat "$dir/qdrant.pid" 2>/dev/null)" 2>/dev/null || true
    rm -rf "$dir"
    ;;
  *)
    echo "usage: scripts/qdrant.sh start|stop DIR" >&2
    exit 2
    ;;
esac
