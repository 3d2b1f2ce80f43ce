"""The OpenAI Agents SDK with Octopus: a ``Runner`` whose session is an
Octopus conversation remembers across runs, its model (the test's loopback
stand-in, reached through the SDK's own chat-completions model) is given
what Octopus holds, and the SDK's session operations reach the server. Run
with the pinned ``openai-agents``."""

from __future__ import annotations

import asyncio
import os
import uuid

import pytest
from agents import Agent, RunConfig, RunHooks, Runner, set_tracing_disabled
from agents.exceptions import AgentsException
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from openai import AsyncOpenAI

from octopus_client import AsyncOctopus, Octopus
from octopus_client.openai_agents import OctopusAgentsError, OctopusMemory, OctopusSession

# Traces would be sent to OpenAI: none leave the test.
set_tracing_disabled(True)


class Seen(RunHooks):
    """Keeps the input items of every model call."""

    def __init__(self) -> None:
        self.inputs: list[list] = []
        self.instructions: list[str | None] = []

    async def on_llm_start(self, context, agent, system_prompt, input_items) -> None:  # noqa: ANN001
        self.inputs.append(list(input_items))
        self.instructions.append(system_prompt)


def texts(items: list) -> list[str]:
    out = []
    for item in items:
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        if content:
            out.append(content)
    return out


def stand_in_model() -> OpenAIChatCompletionsModel:
    return OpenAIChatCompletionsModel(
        model="gpt-4o-mini",
        openai_client=AsyncOpenAI(base_url=os.environ["OCTOPUS_TEST_CHAT_URL"], api_key="sk-test"),
    )


def test_a_runner_remembers_through_an_octopus_session(
    url: str, tenant_key: str, octopus: Octopus, agent_spec: dict, admin: Octopus
) -> None:
    agent = octopus.create_agent(agent_spec)
    support = Agent(name="support", instructions="Answer briefly.", model=stand_in_model())

    async def run() -> None:
        async with AsyncOctopus(url, api_key=tenant_key) as client:
            session = OctopusSession(client, agent_id=str(agent.id), user_id="alice")
            seen = Seen()
            first = await Runner.run(support, "I am vegetarian", session=session, hooks=seen)
            assert first.final_output == "echo: I am vegetarian"

            # What the SDK stored is in Octopus, read back over the API.
            [episode] = octopus.list_episodes(conversation_id=session.conversation_id)
            stored = octopus.get_episode(episode.id).messages
            assert [(m.role.value, m.content) for m in stored] == [
                ("user", "I am vegetarian"),
                ("assistant", "echo: I am vegetarian"),
            ]

            # Another run, another session object on the same conversation:
            # the model is given what Octopus holds.
            again = OctopusSession(client, conversation_id=session.conversation_id)
            await Runner.run(support, "What do I eat?", session=again, hooks=seen)
            assert texts(seen.inputs[-1]) == ["I am vegetarian", "echo: I am vegetarian", "What do I eat?"]
            assert texts(await again.get_items(limit=1)) == ["echo: What do I eat?"]

            popped = await again.pop_item()
            assert texts([popped]) == ["echo: What do I eat?"]
            assert len(await again.get_items()) == 3
            assert len(octopus.get_episode(episode.id).messages) == 3, "erased from Octopus"

            await again.clear_session()
            assert await again.get_items() == []
            assert octopus.get_conversation(session.conversation_id).deleted_at is not None

            # Another tenant's key reaches nothing, in the SDK's terms.
            tenant = admin.create_tenant({"name": f"py-{uuid.uuid4().hex[:12]}"})
            other_key = admin.create_api_key(tenant.id, {"name": "other"}).key
            async with AsyncOctopus(url, api_key=other_key) as other:
                stranger = OctopusSession(other, conversation_id=session.conversation_id)
                with pytest.raises(AgentsException) as raised:
                    await stranger.add_items([{"role": "user", "content": "hello"}])
                assert isinstance(raised.value, OctopusAgentsError)
                assert (raised.value.status, raised.value.code) == (404, "conversation_not_found")

    asyncio.run(run())


def test_the_memory_filter_gives_the_model_what_octopus_holds(
    url: str, tenant_key: str, octopus: Octopus, agent_spec: dict
) -> None:
    agent = octopus.create_agent(agent_spec)
    octopus.add_fact(agent.id, "alice", {"text": "Alice is allergic to peanuts"})
    octopus.ingest_document(agent.id, {"source": "menu.md", "text": "The satay sauce is made with peanuts."})
    support = Agent(name="support", instructions="Answer briefly.", model=stand_in_model())

    async def run() -> None:
        async with AsyncOctopus(url, api_key=tenant_key) as client:
            session = OctopusSession(client, agent_id=str(agent.id), user_id="alice")
            seen = Seen()
            config = RunConfig(call_model_input_filter=OctopusMemory(session))
            result = await Runner.run(support, "Can I have the satay?", session=session, hooks=seen, run_config=config)
            assert result.final_output == "echo: Can I have the satay?"
            [instructions] = seen.instructions
            assert instructions.startswith("Answer briefly.\n\n")
            assert "Alice is allergic to peanuts" in instructions
            assert "satay sauce is made with peanuts" in instructions
            # The agent's own prompt and the history are the SDK's: not repeated.
            assert "Acme's support agent" not in instructions
            assert texts(seen.inputs[0]) == ["Can I have the satay?"]

    asyncio.run(run())
