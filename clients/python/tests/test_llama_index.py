"""LlamaIndex with Octopus: a ``Memory`` whose long-term block is Octopus,
its messages kept in Octopus when they leave the short-term history and
what Octopus recalls reaching LlamaIndex's own mock model; and a retriever
over an agent's knowledge in a query engine. Run with the pinned
``llama-index-core``."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from conftest import eventually, eventually_async
from llama_index.core import Settings
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.llms import MockLLM
from llama_index.core.memory import Memory
from llama_index.core.query_engine import RetrieverQueryEngine

from octopus_client import AsyncOctopus, Octopus, OctopusError
from octopus_client.llama_index import OctopusKnowledgeRetriever, OctopusMemoryBlock


class RecordingLLM(MockLLM):
    """LlamaIndex's mock model, keeping every prompt it was given."""

    def complete(self, prompt: str, formatted: bool = False, **kwargs):  # noqa: ANN003, ANN201
        self.__dict__.setdefault("seen", []).append(prompt)
        return super().complete(prompt, formatted=formatted, **kwargs)


def test_the_memory_block_keeps_and_recalls_through_octopus(
    url: str, tenant_key: str, octopus: Octopus, agent_spec: dict
) -> None:
    agent = octopus.create_agent(agent_spec)

    async def run() -> None:
        async with AsyncOctopus(url, api_key=tenant_key) as client:
            block = OctopusMemoryBlock(client=client, agent_id=str(agent.id), user_id="alice")
            # A short-term history of a few tokens: older messages move to
            # the block, as in a long chat.
            memory = Memory.from_defaults(
                session_id="chat-1", token_limit=60, chat_history_token_ratio=0.3, token_flush_size=10,
                memory_blocks=[block],
            )
            await memory.aput_messages([
                ChatMessage(role="user", content="My parcel 4417 never arrived in Lisbon."),
                ChatMessage(role="assistant", content="I will look into parcel 4417."),
                ChatMessage(role="user", content="Thanks, I also moved to Porto last week."),
                ChatMessage(role="assistant", content="Noted: Porto."),
            ])
            assert block.conversation_id is not None, "messages left the short-term history"

            # What LlamaIndex stored is in Octopus, read back over the API.
            [episode] = octopus.list_episodes(conversation_id=block.conversation_id)
            stored = [(m.role.value, m.content) for m in octopus.get_episode(episode.id).messages]
            assert stored[0] == ("user", "My parcel 4417 never arrived in Lisbon.")

            # What Octopus recalls reaches the prompt, under the limit.
            async def prompt() -> str:
                messages = await memory.aget(input="What happened to my delivery?")
                return "\n".join(str(m.content) for m in messages)

            seen = await eventually_async(
                prompt, lambda text: "parcel 4417 never arrived" in text, "the parcel is recalled"
            )
            assert "<octopus>" in seen and "(user said," in seen

            # A tighter limit shortens the block from its lowest-ranked line;
            # the best one stays.
            content = await block.aget([ChatMessage(role="user", content="What happened to my delivery?")])
            lines = content.splitlines()
            assert len(lines) > 1
            shorter = await block.atruncate(content, 1)
            assert shorter is not None and shorter.splitlines() == lines[:-1]
            assert await block.atruncate(content, 100_000) is None

            # A corrected fact reads as one that held for a time; the
            # correction, as one that holds.
            lisbon = await client.add_fact(agent.id, "alice", {"text": "Alice lives in Lisbon"})
            await client.correct_fact(lisbon.id, {"text": "Alice lives in Porto"})
            lines = (await block.aget([ChatMessage(role="user", content="Where does Alice live?")])).splitlines()
            assert any(line.startswith("- (fact, held ") and "to" in line and "Lisbon" in line for line in lines), lines
            assert any(line.startswith("- (fact, since ") and "Porto" in line for line in lines), lines

    asyncio.run(run())


def test_the_knowledge_retriever_answers_through_a_query_engine(
    octopus: Octopus, agent_spec: dict, url: str, admin: Octopus
) -> None:
    agent = octopus.create_agent(agent_spec)
    octopus.ingest_document(agent.id, {"source": "kitchen.md", "text": "The office kitchen is cleaned every Friday."})
    retriever = OctopusKnowledgeRetriever(octopus, str(agent.id), top_k=2)
    nodes = eventually(lambda: retriever.retrieve("when is the kitchen cleaned"), lambda n: len(n) > 0, "found")
    assert nodes[0].node.metadata["source"] == "kitchen.md" and nodes[0].score > 0
    [hit] = octopus.search_knowledge(agent.id, {"query": "kitchen", "top_k": 1})
    assert nodes[0].node.node_id == str(hit.chunk.id)

    # The chunk reaches the model of a query engine built on the retriever.
    llm = RecordingLLM()
    Settings.llm = llm
    engine = RetrieverQueryEngine.from_args(retriever, llm=llm)
    engine.query("When is the kitchen cleaned?")
    assert any("cleaned every Friday" in prompt for prompt in llm.__dict__["seen"])

    # Another tenant's key reaches nothing and says why.
    tenant = admin.create_tenant({"name": f"py-{uuid.uuid4().hex[:12]}"})
    with Octopus(url, api_key=admin.create_api_key(tenant.id, {"name": "other"}).key) as other:
        with pytest.raises(OctopusError) as raised:
            OctopusKnowledgeRetriever(other, str(agent.id)).retrieve("kitchen")
        assert (raised.value.status, raised.value.code) == (404, "agent_not_found")
