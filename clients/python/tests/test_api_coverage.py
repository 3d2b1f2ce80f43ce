"""The client follows the server's own /openapi.json: every operation has a
method on both clients taking each of its parameters, and the generated
files are what the document makes today."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import httpx
import pytest

from octopus_client import AsyncOctopus, Octopus

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture(scope="module")
def document(url: str) -> dict:
    return httpx.get(f"{url}/openapi.json").raise_for_status().json()


def operations(document: dict):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in {"get", "post", "put", "patch", "delete"}:
                yield method, path, operation


@pytest.mark.parametrize("client", [Octopus, AsyncOctopus])
def test_every_operation_has_a_method_with_its_parameters(document: dict, client: type) -> None:
    missing = []
    for method, path, operation in operations(document):
        name = operation["operationId"]
        function = getattr(client, name, None)
        if function is None:
            missing.append(f"{name} ({method.upper()} {path})")
            continue
        accepted = set(inspect.signature(function).parameters)
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "header":
                wanted = parameter["name"].removeprefix("x-octopus-").replace("-", "_")
                wanted = "conversation_id" if wanted == "conversation" else wanted
            else:
                wanted = parameter["name"] + ("_" if parameter["name"] == "from" else "")
            if wanted not in accepted:
                missing.append(f"{name}: parameter {parameter['name']}")
        if "requestBody" in operation and not accepted & {"body", "patch", "dump", "export"}:
            missing.append(f"{name}: its body")
    assert not missing, f"{client.__name__} lacks: {missing}"


def test_the_generated_files_are_current(document: dict) -> None:
    spec = importlib.util.spec_from_file_location("generate", SCRIPTS / "generate.py")
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    stale = [path.name for path, text in generate.wanted(document).items() if path.read_text() != text]
    assert not stale, f"run clients/python/scripts/generate.py: {stale} differ from what the server's document makes"
