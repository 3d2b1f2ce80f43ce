"""The official MCP Python SDK against Octopus: every tool and resource, and
a second tenant's key that reaches none of the first's data.

Run by crates/octopus-cli/tests/it/clients.rs, which starts the server and
sets the environment:
  OCTOPUS_MCP_MODE   http | relay | local (how the client reaches Octopus)
  OCTOPUS_URL        the server (http, relay)
  OCTOPUS_BIN        the octopus binary (relay, local)
  OCTOPUS_DATA_DIR   the data directory `octopus mcp` opens (local)
  OCTOPUS_API_KEY    the tenant's key; OCTOPUS_OTHER_KEY another tenant's
  OCTOPUS_TEST_USER  the user the calls are about
  OCTOPUS_EXPECT_FORGET  1 when the server offers forget_user (and with it
                     update_memory and delete_memory)
  OCTOPUS_ADMIN_KEY  the admin key, to bring in a fact the tools change
Any failed expectation raises, and the exit status says so.
"""

import asyncio
import json
import os
import re
import uuid
from urllib.parse import quote

import httpx

import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

MODE = os.environ["OCTOPUS_MCP_MODE"]
USER = os.environ["OCTOPUS_TEST_USER"]
AGENT = "support"


def connect(key):
    """A client of Octopus over this run's transport, with `key`."""
    if MODE == "http":
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
        return Client(streamable_http_client(os.environ["OCTOPUS_URL"] + "/mcp", http_client=http))
    env = {"OCTOPUS_API_KEY": key, "PATH": os.environ.get("PATH", "")}
    args = ["mcp"]
    if MODE == "relay":
        env["OCTOPUS_URL"] = os.environ["OCTOPUS_URL"]
    else:
        args += ["--data-dir", os.environ["OCTOPUS_DATA_DIR"], "--log", "warn"]
    return Client(StdioServerParameters(command=os.environ["OCTOPUS_BIN"], args=args, env=env))


def text(result):
    assert not result.is_error, result
    return "\n".join(block.text for block in result.content)


async def failed(call, code):
    """The tool `call` ran and failed: a result marked `isError`, whose text
    (what the model reads) and structured content carry the REST API's
    `code`."""
    result = await call
    assert result.is_error, result
    assert result.structured_content["error"]["code"] == code, result
    said = "\n".join(block.text for block in result.content)
    assert said.startswith(f"{code}: "), said
    return said


async def refused(call, code):
    """`call` (not a tool's) fails with an MCP error carrying the REST API's
    `code`."""
    try:
        result = await call
    except MCPError as error:
        assert error.error.data["code"] == code, error.error
        return error.error
    raise AssertionError(f"expected {code}, got {result}")


async def invalid_params(client, method, params):
    """A request of a known method whose params do not fit it is refused as
    JSON-RPC's invalid params (-32602), not as an unknown method."""
    try:
        result = await client.session.send_request(types.Request(method=method, params=params), types.EmptyResult)
    except MCPError as error:
        assert error.error.code == -32602, (method, params, error.error)
        assert method in error.error.message, error.error
        return
    raise AssertionError(f"expected invalid params for {method} {params}, got {result}")


async def first_tenant():
    async with connect(os.environ["OCTOPUS_API_KEY"]) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        expected = {"remember", "recall", "search_knowledge", "get_context", "list_procedures", "add_document"}
        if os.environ.get("OCTOPUS_EXPECT_FORGET") == "1":
            expected |= {"forget_user", "update_memory", "delete_memory"}
        assert names == expected, names
        for tool in (await client.list_tools()).tools:
            assert tool.description and tool.input_schema["type"] == "object", tool

        added = text(await client.call_tool("add_document", {
            "agent": AGENT, "source": "policies/refunds.md",
            "text": "# Refunds\n\nRefunds are paid within 14 days of the return arriving.",
            "category": "policy"}))
        assert "policies/refunds.md" in added, added
        found = text(await client.call_tool("search_knowledge", {"agent": AGENT, "query": "how long until I get my money back"}))
        assert "14 days" in found and "policies/refunds.md" in found, found

        stored = text(await client.call_tool("remember", {"agent": AGENT, "user": USER, "content": "My dog is called Biscuit."}))
        assert "Remembered message" in stored, stored
        text(await client.call_tool("remember", {"agent": AGENT, "user": USER, "role": "assistant",
                                                 "content": "Noted: your dog is Biscuit."}))
        recalled = text(await client.call_tool("recall", {"agent": AGENT, "user": USER, "query": "what is my dog's name"}))
        assert "Biscuit" in recalled, recalled

        context = text(await client.call_tool("get_context", {"agent": AGENT, "user": USER, "message": "Can you remind me of my dog's name?"}))
        assert "You are Acme's support agent." in context and "Biscuit" in context, context
        # A standing request, once the memory worker has read it, leads
        # every later context, though the later message shares no word.
        text(await client.call_tool("remember", {"agent": AGENT, "user": USER,
                                                 "content": "Always call me by my first name, Dana."}))
        for _ in range(600):
            context = text(await client.call_tool("get_context", {"agent": AGENT, "user": USER, "message": "What is the weather like?"}))
            if "standing instruction" in context:
                break
            await asyncio.sleep(0.1)
        assert "Always call me by my first name, Dana." in context, context
        procedures = text(await client.call_tool("list_procedures", {"agent": AGENT}))
        assert "refund request" in procedures and "Check the order date" in procedures, procedures

        resources = (await client.list_resources()).resources
        episodes = [r for r in resources if r.uri.startswith("octopus://episodes/")]
        documents = [r for r in resources if "/documents/" in r.uri]
        assert episodes and documents, resources
        episode_texts = [(await client.read_resource(r.uri)).contents[0].text for r in episodes]
        assert any("My dog is called Biscuit." in t for t in episode_texts), episode_texts
        document = (await client.read_resource(documents[0].uri)).contents[0].text
        assert "14 days" in document, document

        # The user's profile, a resource of its own: the instruction leads it.
        agent_id = documents[0].uri.split("/")[3]
        profile_uri = f"octopus://agents/{agent_id}/users/{quote(USER, safe='')}/profile"
        templates = (await client.list_resource_templates()).resource_templates
        assert any(t.uri_template.endswith("/users/{user_id}/profile") for t in templates), templates
        profile = (await client.read_resource(profile_uri)).contents[0].text
        assert "Instructions\n  - Always call me by my first name, Dana." in profile, profile

        await failed(client.call_tool("recall", {"agent": "nobody", "user": USER, "query": "dog"}), "agent_not_found")
        await invalid_params(client, "tools/call", {"arguments": {"agent": AGENT}})
        await invalid_params(client, "tools/call", {"name": "recall", "arguments": "not an object"})
        await invalid_params(client, "resources/read", {})
        await failed(client.call_tool("remember", {"agent": AGENT, "user": USER}), "invalid_request")

        if os.environ.get("OCTOPUS_EXPECT_FORGET") == "1":
            text(await client.call_tool("remember", {"agent": AGENT, "user": USER + "-leaving", "content": "My passport number is X1234567."}))
            forgot = text(await client.call_tool("forget_user", {"user": USER + "-leaving"}))
            assert "Forgot" in forgot and "1 conversation removed" in forgot, forgot
            after = text(await client.call_tool("recall", {"agent": AGENT, "user": USER + "-leaving", "query": "passport number"}))
            assert "X1234567" not in after, after
            fact = await correct_and_delete_a_fact(client, stored)
        else:
            fact = None
        return [r.uri for r in episodes + documents] + [profile_uri], fact


def learned_fact(episode: str, text: str) -> str:
    """A fact about USER with `text`, of `episode`, brought in as a learned
    fact travels: a dump holding it alone, imported with the admin key."""
    url, key = os.environ["OCTOPUS_URL"], os.environ["OCTOPUS_API_KEY"]
    header = httpx.get(f"{url}/v1/export", headers={"authorization": f"Bearer {key}"}).text.splitlines()[0]
    tenant = json.loads(header)["tenant_id"]
    agents = httpx.get(f"{url}/v1/agents", headers={"authorization": f"Bearer {key}"}).json()["items"]
    agent = next(a["id"] for a in agents if a["name"] == AGENT)
    fact, at = str(uuid.uuid4()), "2026-01-01T00:00:00Z"
    lines = [
        {"type": "header", "format": "octopus-dump", "version": 1, "exported_at": at, "tenant_id": tenant, "user_id": None},
        {"type": "fact", "id": fact, "tenant_id": tenant, "agent_id": agent, "user_id": USER, "episode_id": episode,
         "message_ids": [], "text": text, "valid_from": at, "valid_to": None, "superseded_by": None, "created_at": at},
        {"type": "end", "records": 2},
    ]
    response = httpx.post(f"{url}/v1/import", content="\n".join(json.dumps(line) for line in lines),
                          headers={"authorization": f"Bearer {os.environ['OCTOPUS_ADMIN_KEY']}",
                                   "content-type": "application/x-ndjson"})
    assert response.is_success, response.text
    return fact


async def correct_and_delete_a_fact(client, remembered: str) -> str:
    """The model corrects a fact recall showed it, then deletes it."""
    episode = re.search(r"\(episode ([0-9a-f-]+)\)", remembered).group(1)
    fact = learned_fact(episode, "Biscuit is a beagle")
    recalled = text(await client.call_tool("recall", {"agent": AGENT, "user": USER, "query": "what breed is Biscuit"}))
    assert f"fact {fact}: Biscuit is a beagle" in recalled, recalled
    corrected = text(await client.call_tool("update_memory", {
        "fact_id": fact, "text": "Biscuit is a basset hound", "reason": "the user said so"}))
    assert "Biscuit is a basset hound" in corrected, corrected
    recalled = text(await client.call_tool("recall", {"agent": AGENT, "user": USER, "query": "Biscuit basset hound"}))
    assert "Biscuit is a basset hound" in recalled, recalled
    await failed(client.call_tool("update_memory", {"fact_id": fact, "text": "a poodle"}), "fact_replaced")
    await failed(client.call_tool("update_memory", {"fact_id": "not-an-id", "text": "a poodle"}), "invalid_request")
    deleted = text(await client.call_tool("delete_memory", {"fact_id": fact}))
    assert "Deleted fact" in deleted and '"versions":2' in deleted, deleted
    recalled = text(await client.call_tool("recall", {"agent": AGENT, "user": USER, "query": "Biscuit basset hound beagle"}))
    assert "basset" not in recalled and "beagle" not in recalled, recalled
    await failed(client.call_tool("delete_memory", {"fact_id": fact}), "fact_not_found")
    return fact


async def second_tenant(uris, fact):
    """Another tenant's key: none of the first's data, by name or by id."""
    async with connect(os.environ["OCTOPUS_OTHER_KEY"]) as client:
        if fact:
            await failed(client.call_tool("update_memory", {"fact_id": fact, "text": "intruder"}), "fact_not_found")
            await failed(client.call_tool("delete_memory", {"fact_id": fact}), "fact_not_found")
        resources = (await client.list_resources()).resources
        assert resources == [], resources
        for uri in uris:
            error = await refused(client.read_resource(uri), "agent_not_found" if "octopus://agents/" in uri else "episode_not_found")
            assert "Biscuit" not in str(error)
        agent_id = uris[-1].split("/")[3]
        for name in (AGENT, agent_id):
            await failed(client.call_tool("recall", {"agent": name, "user": USER, "query": "dog"}), "agent_not_found")
            await failed(client.call_tool("search_knowledge", {"agent": name, "query": "refunds"}), "agent_not_found")
            await failed(client.call_tool("remember", {"agent": name, "user": USER, "content": "intruder"}), "agent_not_found")


async def main():
    uris, fact = await first_tenant()
    if os.environ.get("OCTOPUS_OTHER_KEY"):
        await second_tenant(uris, fact)
    print("ok")


asyncio.run(main())
