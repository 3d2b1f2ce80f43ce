#!/usr/bin/env bash
# The book, checked as a reader meets it: built by mdBook (installed pinned,
# once, into the cache), its links and words
# checked, and each page's runnable blocks run against a server of their own
# (after the quickstart and the pages the page says it builds on, pages in a
# shuffled order: OCTOPUS_DOCS_SEED repeats one), with `octopus` installed on
# the PATH the way scripts/install.sh installs it.
# Run by test.sh after the clients are installed (the Python blocks use
# the official clients' virtualenv; the TypeScript block, npm).
set -euo pipefail
cd "$(dirname "$0")/.."

MDBOOK_VERSION=0.5.4
tools="$HOME/.cache/octopus/tools/mdbook-$MDBOOK_VERSION"
if [ ! -x "$tools/bin/mdbook" ]; then
  echo "Installing mdbook $MDBOOK_VERSION into $tools..." >&2
  # Its own target folder: mdbook's dependencies are not Octopus's.
  cargo install --locked --quiet mdbook --version "$MDBOOK_VERSION" --no-default-features \
    --root "$tools" --target-dir "$HOME/.cache/octopus/tools/target"
fi
work=$(mktemp -d -t octopus-docs.XXXXXX)
# OCTOPUS_DOCS_KEEP=1 keeps the blocks, their outputs and the server's data.
[ -n "${OCTOPUS_DOCS_KEEP:-}" ] && echo "docs: working in $work" >&2 || trap 'rm -rf "$work"' EXIT
"$tools/bin/mdbook" build docs --dest-dir "$work/book" >"$work/mdbook.log" 2>&1 ||
  { cat "$work/mdbook.log" >&2; echo "mdbook build failed" >&2; exit 1; }
if grep -E 'WARN|ERROR' "$work/mdbook.log" >&2; then
  echo "mdbook build warned" >&2
  exit 1
fi
python3 scripts/docs_check.py links
python3 scripts/docs_check.py words
# `octopus` as a user has it: installed from this checkout onto the PATH
# (a debug build, which the tests have built already).
./scripts/install.sh --debug --root "$work/installed"
# The blocks' Python is a virtualenv of their own that sees the pinned
# official clients (openai, mcp) and can install the repository's client.
python3 -m venv "$work/venv"
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$OCTOPUS_TEST_CLIENTS_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' >"$site/clients.pth"
mkdir -p "$work/home"
# The blocks run in a folder of their own, with the repository's clients as a
# clone has them.
cp -r clients "$work/home/clients"
rm -rf "$work/home/clients/typescript/node_modules" "$work/home/clients/python/build"
PATH="$work/installed/bin:$work/venv/bin:$PATH" python3 scripts/docs_check.py run "$work"
