"""Writes the client's generated files, or checks that they are current.

- ``src/octopus_client/models.py``: pydantic models of every schema in the
  server's ``/openapi.json``, made by datamodel-code-generator (pinned in
  ``pyproject.toml``'s ``dev`` extra). The document's bounds (lengths,
  ranges, patterns) are left out: they are the server's settings, which an
  operator may change, and the server checks them, naming the field.
- ``src/octopus_client/_sync_client.py``: the synchronous client, made from
  the asynchronous one.

    python scripts/generate.py http://127.0.0.1:7700/openapi.json
    python scripts/generate.py --check http://127.0.0.1:7700/openapi.json
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "octopus_client"

# Keywords that bound a value rather than shape it.
BOUNDS = {
    "maxLength",
    "minLength",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "maxItems",
    "minItems",
    "pattern",
}

# From the asynchronous client to the synchronous one, in this order.
SYNC_REWRITES = [
    (r"\basync def\b", "def"),
    (r"\basync with\b", "with"),
    (r"\basync for\b", "for"),
    (r"\bawait ", ""),
    (r"\bAsyncIterator\b", "Iterator"),
    (r"\bhttpx\.AsyncClient\b", "httpx.Client"),
    (r"\bAsyncOctopus\b", "Octopus"),
    (r"\baiter_lines\b", "iter_lines"),
    (r"\baread\b", "read"),
    (r"\baclose\b", "close"),
    (r"\b__aenter__\b", "__enter__"),
    (r"\b__aexit__\b", "__exit__"),
]

SYNC_HEADER = '''"""The synchronous client: one method per operation of the Octopus API.

Written by ``scripts/generate.py`` from ``_async_client.py``; do not edit.
"""
'''


def without_bounds(value: object) -> object:
    if isinstance(value, dict):
        return {k: without_bounds(v) for k, v in value.items() if k not in BOUNDS}
    if isinstance(value, list):
        return [without_bounds(v) for v in value]
    return value


def models_source(document: dict) -> str:
    """The models module for an OpenAPI document."""
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "openapi.json"
        output = Path(scratch) / "models.py"
        source.write_text(json.dumps(without_bounds(document), sort_keys=True))
        subprocess.run(
            [
                sys.executable, "-m", "datamodel_code_generator",
                "--input", str(source),
                "--input-file-type", "openapi",
                "--output", str(output),
                "--output-model-type", "pydantic_v2.BaseModel",
                "--target-python-version", "3.10",
                "--use-union-operator",
                "--collapse-root-models",
                "--use-standard-collections",
                "--disable-timestamp",
                "--formatters", "builtin",
                "--custom-file-header", '"""The API\'s schemas as pydantic models, generated from its /openapi.json by\nclients/python/scripts/generate.py; do not edit."""',
            ],
            check=True,
            capture_output=True,
        )
        return output.read_text()


def sync_source(async_source: str) -> str:
    """The synchronous client for the asynchronous one's source."""
    body = async_source[async_source.index('"""', 3) + 3 :]
    for pattern, replacement in SYNC_REWRITES:
        body = re.sub(pattern, replacement, body)
    return SYNC_HEADER + body


def wanted(document: dict) -> dict[Path, str]:
    return {
        PACKAGE / "models.py": models_source(document),
        PACKAGE / "_sync_client.py": sync_source((PACKAGE / "_async_client.py").read_text()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("openapi", help="the server's /openapi.json: a URL or a file")
    parser.add_argument("--check", action="store_true", help="fail when a generated file is not current")
    args = parser.parse_args()
    if args.openapi.startswith(("http://", "https://")):
        with urllib.request.urlopen(args.openapi) as response:
            document = json.load(response)
    else:
        document = json.loads(Path(args.openapi).read_text())
    stale = []
    for path, text in wanted(document).items():
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(path.name)
        else:
            path.write_text(text)
    if stale:
        print(f"not current: {', '.join(stale)}; run scripts/generate.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
