"""The client against a real `octopus serve`.

The server and its chat model are the test command's: `crates/octopus-cli/
tests/it/our_clients.rs` starts them and names them here in
``OCTOPUS_URL`` and ``OCTOPUS_ADMIN_KEY``, and ``OCTOPUS_TEST_CHAT_URL``
(a loopback server that speaks OpenAI's wire format and answers
``echo: <the user's last message>``), and ``OCTOPUS_TEST_CHAT_EXPORTS``
(the folder of a ChatGPT and a Claude export to import). To run these by hand, point them at a
server of your own whose environment has ``OPENAI_API_KEY`` set and whose
``[llm] allowed_base_urls`` holds that URL.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import pytest

from octopus_client import Octopus

T = TypeVar("T")


def required(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these through the test command (scripts/test.sh)")
    return value


@pytest.fixture(scope="session")
def url() -> str:
    return required("OCTOPUS_URL")


@pytest.fixture(scope="session")
def admin(url: str) -> Iterator[Octopus]:
    with Octopus(url, api_key=required("OCTOPUS_ADMIN_KEY")) as client:
        yield client


@pytest.fixture()
def tenant_key(admin: Octopus) -> str:
    """A new tenant's key: each test starts from an empty tenant."""
    tenant = admin.create_tenant({"name": f"py-{uuid.uuid4().hex[:12]}"})
    return admin.create_api_key(tenant.id, {"name": "tests"}).key


@pytest.fixture()
def octopus(url: str, tenant_key: str) -> Iterator[Octopus]:
    with Octopus(url, api_key=tenant_key) as client:
        yield client


@pytest.fixture()
def agent_spec() -> dict:
    return {
        "name": "support",
        "system_prompt": "You are Acme's support agent.",
        "llm": {
            "provider": "openai",
            "model": "gpt-4o-mini",
            "base_url": required("OCTOPUS_TEST_CHAT_URL"),
        },
    }


def eventually(read: Callable[[], T], done: Callable[[T], bool], what: str, seconds: float = 60) -> T:
    """What `read` returns once `done` holds of it: memory is embedded by a
    worker after the write is acknowledged."""
    deadline = time.monotonic() + seconds
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: still not so after {seconds} s; last: {value!r}")
        time.sleep(0.1)


async def eventually_async(
    read: Callable[[], Awaitable[T]], done: Callable[[T], bool], what: str, seconds: float = 60
) -> T:
    """As :func:`eventually`, for a coroutine."""
    deadline = time.monotonic() + seconds
    while True:
        value = await read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: still not so after {seconds} s; last: {value!r}")
        await asyncio.sleep(0.1)
