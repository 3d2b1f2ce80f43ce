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
  OCTOPUS_EXPECT_FORGET  1 when the server offers forget_user
Any failed expectation raises, and the exit status says so.
"""

import asyncio
import os

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


async def refused(call, code):
    """`call` fails with an MCP error carrying the REST API's `code`."""
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
            expected.add("forget_user")
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

        await refused(client.call_tool("recall", {"agent": "nobody", "user": USER, "query": "dog"}), "agent_not_found")
        await invalid_params(client, "tools/call", {"arguments": {"agent": AGENT}})
        await invalid_params(client, "tools/call", {"name": "recall", "arguments": "not an object"})
        await invalid_params(client, "resources/read", {})
        await refused(client.call_tool("remember", {"agent": AGENT, "user": USER}), "invalid_request")

        if os.environ.get("OCTOPUS_EXPECT_FORGET") == "1":
            text(await client.call_tool("remember", {"agent": AGENT, "user": USER + "-leaving", "content": "My passport number is X1234567."}))
            forgot = text(await client.call_tool("forget_user", {"user": USER + "-leaving"}))
            assert "Forgot" in forgot, forgot
            after = text(await client.call_tool("recall", {"agent": AGENT, "user": USER + "-leaving", "query": "passport number"}))
            assert "X1234567" not in after, after
        return [r.uri for r in episodes + documents]


async def second_tenant(uris):
    """Another tenant's key: none of the first's data, by name or by id."""
    async with connect(os.environ["OCTOPUS_OTHER_KEY"]) as client:
        resources = (await client.list_resources()).resources
        assert resources == [], resources
        for uri in uris:
            error = await refused(client.read_resource(uri), "agent_not_found" if "/documents/" in uri else "episode_not_found")
            assert "Biscuit" not in str(error)
        agent_id = uris[-1].split("/")[3]
        for name in (AGENT, agent_id):
            await refused(client.call_tool("recall", {"agent": name, "user": USER, "query": "dog"}), "agent_not_found")
            await refused(client.call_tool("search_knowledge", {"agent": name, "query": "refunds"}), "agent_not_found")
            await refused(client.call_tool("remember", {"agent": name, "user": USER, "content": "intruder"}), "agent_not_found")


async def main():
    uris = await first_tenant()
    if os.environ.get("OCTOPUS_OTHER_KEY"):
        await second_tenant(uris)
    print("ok")


asyncio.run(main())
