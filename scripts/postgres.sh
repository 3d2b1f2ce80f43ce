#!/usr/bin/env bash
# A throwaway PostgreSQL with pgvector, for tests and for trying Octopus on
# PostgreSQL without installing one.
#
#   scripts/postgres.sh start   start a cluster on a free port; print its URL
#   scripts/postgres.sh url     print the running cluster's URL
#   scripts/postgres.sh stop    stop it and delete its data
#   scripts/postgres.sh build   only prepare the binaries (PostgreSQL with
#                               pgvector in the cache), then print where
#
# PostgreSQL is Debian's (the release's own major version). pgvector is built
# here, once, from the source package Debian's current stable release carries
# (fetched with `apt-get source` through this machine's own Debian mirror,
# signatures checked as for any package), for the baseline x86-64 CPU: its
# Makefile otherwise compiles for the CPU it builds on (`-march=native`), and
# a build made on an AVX-512 machine dies with "Illegal instruction" on one
# without. Built this way, its distance functions still pick AVX, FMA or F16C
# at run time where the CPU has them. The server's files and the extension
# are put together in a folder of the cache, so nothing of the system's own
# PostgreSQL changes. PostgreSQL refuses to run as root: as root, the cluster
# runs as an unprivileged user, `octopus-pg`, created when missing.
#
# With a PostgreSQL of your own, skip this and set OCTOPUS_DATABASE_URL.
#
# Environment:
#   OCTOPUS_PG_CLUSTER  where the cluster lives (data, port, password; the
#                       default is the cache's `cluster`): one per value, so
#                       several can run at once (scripts/test.sh uses its own)
#   OCTOPUS_PG_CACHE    where the PostgreSQL binaries are kept
set -euo pipefail

PG_USER_NAME="octopus"
# The Debian release whose pgvector source is built: its 0.8.0 builds against
# PostgreSQL 13 to 17.
PGVECTOR_SUITE="trixie"

if [ "$(id -u)" -eq 0 ]; then
  # Root's home is private: the unprivileged user must read the binaries.
  cache="${OCTOPUS_PG_CACHE:-/var/cache/octopus-postgres}"
  runner="octopus-pg"
  sudo=""
else
  cache="${OCTOPUS_PG_CACHE:-$HOME/.cache/octopus/postgres}"
  runner=""
  sudo="sudo"
fi
install="$cache/debian-postgres-pgvector"
cluster="${OCTOPUS_PG_CLUSTER:-$cache/cluster}"

# The programs of the prepared tree (one major version in it).
bin_dir() {
  local dir
  for dir in "$install"/usr/lib/postgresql/*/bin; do
    [ -x "$dir/postgres" ] && { echo "$dir"; return; }
  done
  return 1
}

# Runs a PostgreSQL program as the user the cluster belongs to.
as_runner() {
  if [ -n "$runner" ]; then
    su -s /bin/sh "$runner" -c "$(printf '%q ' "$@")"
  else
    "$@"
  fi
}

need_apt() {
  command -v apt-get >/dev/null 2>&1 && return
  echo "scripts/postgres.sh needs Debian's apt-get (PostgreSQL and pgvector's source come from Debian)." >&2
  echo "With a PostgreSQL of your own that has pgvector 0.8 or newer, set OCTOPUS_DATABASE_URL instead." >&2
  exit 1
}

# The highest PostgreSQL major version Debian's packages put on this machine;
# the release's default one is installed when there is none.
server_major() {
  local dir major=""
  for dir in /usr/lib/postgresql/*/bin/postgres; do
    [ -x "$dir" ] || continue
    dir=${dir%/bin/postgres}
    [ -z "$major" ] || [ "${dir##*/}" -gt "$major" ] && major=${dir##*/}
  done
  if [ -z "$major" ]; then
    echo "Installing PostgreSQL with apt-get..." >&2
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq postgresql; } >&2
    major=$(server_major)
  fi
  echo "$major"
}

# pgvector's source, unpacked into $1: the package Debian's $PGVECTOR_SUITE
# carries, through the mirror this machine's own release comes from. A list
# of that suite's sources kept in the cache, so apt's own lists are untouched.
fetch_pgvector_source() {
  local into="$1" codename mirror lists
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  mirror_of_release() {
    apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null \
      | awk -v c="$codename" '$1 == c { print $2; exit }'
  }
  mirror=$(mirror_of_release)
  # apt names its sources' targets only once their lists were fetched.
  [ -n "$mirror" ] || { $sudo apt-get update -qq >&2; mirror=$(mirror_of_release); }
  [ -n "$mirror" ] || { echo "no Debian mirror found in apt's sources for '$codename'" >&2; exit 1; }
  lists="$cache/apt-$PGVECTOR_SUITE"
  mkdir -p "$lists/lists/partial" "$lists/cache/archives/partial"
  echo "deb-src $mirror $PGVECTOR_SUITE main" >"$lists/sources.list"
  local apt_options=(-o "Dir::Etc::SourceList=$lists/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$lists/lists" -o "Dir::Cache=$lists/cache" -o APT::Sandbox::User=root)
  apt-get "${apt_options[@]}" update -qq >&2
  (cd "$into" && apt-get "${apt_options[@]}" source --download-only -qq pgvector >&2)
  tar -xzf "$into"/pgvector_*.orig.tar.gz -C "$into"
}

# PostgreSQL's files copied from the system into the cache, with pgvector
# compiled for the baseline CPU and installed beside them. PostgreSQL finds
# its share folder relative to its programs, so the copy runs as it is.
build() {
  bin_dir >/dev/null 2>&1 && [ -f "$install/.built" ] && return
  need_apt
  local major pg_config
  major=$(server_major)
  pg_config="/usr/lib/postgresql/$major/bin/pg_config"
  # The server's headers, not only PGXS's makefiles: Debian's client
  # package carries the makefiles without the headers pgvector includes.
  if [ ! -f "/usr/lib/postgresql/$major/lib/pgxs/src/makefiles/pgxs.mk" ] ||
    [ ! -f "$("$pg_config" --includedir-server)/postgres.h" ]; then
    echo "Installing PostgreSQL $major's extension headers with apt-get..." >&2
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq "postgresql-server-dev-$major" make; } >&2
  fi
  command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1 ||
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq gcc make libc6-dev; } >&2
  echo "Building pgvector for PostgreSQL $major from Debian's source ($PGVECTOR_SUITE)..." >&2
  local work
  work=$(mktemp -d)
  fetch_pgvector_source "$work"
  rm -rf "$install.partial"
  mkdir -p "$install.partial/usr/lib/postgresql" "$install.partial/usr/share/postgresql"
  cp -a "/usr/lib/postgresql/$major" "$install.partial/usr/lib/postgresql/"
  cp -a "/usr/share/postgresql/$major" "$install.partial/usr/share/postgresql/"
  local source
  source=$(echo "$work"/pgvector-*/)
  # OPTFLAGS empty: the baseline CPU, not this one's. No LLVM bitcode: the
  # test server runs without JIT, and clang need not be installed.
  make -C "$source" -s -j2 PG_CONFIG="$pg_config" OPTFLAGS="" with_llvm=no >&2
  make -C "$source" -s install PG_CONFIG="$pg_config" OPTFLAGS="" with_llvm=no DESTDIR="$install.partial" >&2
  basename "$source" >"$install.partial/.built"
  rm -rf "$work"
  chmod -R a+rX "$install.partial"
  rm -rf "$install"
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
  build
  local bin
  bin=$(bin_dir)
  if [ -f "$cluster/port" ] && as_runner "$bin/pg_ctl" -D "$cluster/data" status >/dev/null 2>&1; then
    url
    return
  fi
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
  PGPASSWORD="$(cat "$cluster/password")" "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$PG_USER_NAME" octopus
  echo "$port" >"$cluster/port"
  url
}

stop() {
  [ -d "$cluster/data" ] || return 0
  local bin
  bin=$(bin_dir) || { rm -rf "$cluster"; return 0; }
  as_runner "$bin/pg_ctl" -D "$cluster/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$cluster"
}

case "${1:-}" in
  start) start ;;
  url) url ;;
  stop) stop ;;
  build) build && bin_dir ;;
  *) echo "usage: scripts/postgres.sh start|url|stop|build" >&2; exit 2 ;;
esac
