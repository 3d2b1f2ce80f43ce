"""LangChain with Octopus: a conversation's history kept in Octopus, and a
retriever whose documents reach LangChain's own fake chat model. Run with
the pinned ``langchain-core``."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from conftest import eventually
from langchain_core.exceptions import LangChainException
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate

from octopus_client import Octopus
from octopus_client.langchain import OctopusChatMessageHistory, OctopusLangChainError, OctopusRetriever


class RecordingChat(GenericFakeChatModel):
    """LangChain's fake chat model, keeping every prompt it was given."""

    seen: list[Any] = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # noqa: ANN001
        self.seen.append(messages)
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def test_the_history_is_an_octopus_conversation(octopus: Octopus, agent_spec: dict) -> None:
    agent = octopus.create_agent(agent_spec)
    history = OctopusChatMessageHistory(octopus, agent_id=str(agent.id), user_id="alice")
    assert history.messages == []
    history.add_messages([HumanMessage("I am vegetarian"), AIMessage("Noted: no meat.")])
    history.add_user_message("And I live in Lyon")

    # What LangChain stored is in Octopus, read back over the API.
    [conversation] = octopus.list_conversations(agent_id=agent.id, user_id="alice")
    assert str(conversation.id) == history.conversation_id
    [episode] = octopus.list_episodes(conversation_id=conversation.id)
    stored = octopus.get_episode(episode.id).messages
    assert [(m.role.value, m.content) for m in stored] == [
        ("user", "I am vegetarian"),
        ("assistant", "Noted: no meat."),
        ("user", "And I live in Lyon"),
    ]
    again = OctopusChatMessageHistory(octopus, conversation_id=history.conversation_id)
    assert [(type(m).__name__, m.content) for m in again.messages] == [
        ("HumanMessage", "I am vegetarian"),
        ("AIMessage", "Noted: no meat."),
        ("HumanMessage", "And I live in Lyon"),
    ]
    assert again.messages[0].id == str(stored[0].id)

    history.clear()
    assert history.messages == []
    assert octopus.get_conversation(conversation.id).deleted_at is not None
    history.add_user_message("Starting over")
    assert history.conversation_id != str(conversation.id)


def test_recalled_memory_reaches_the_model(octopus: Octopus, agent_spec: dict) -> None:
    agent = octopus.create_agent(agent_spec)
    OctopusChatMessageHistory(octopus, agent_id=str(agent.id), user_id="alice").add_messages(
        [HumanMessage("My parcel 4417 never arrived in Lisbon."), AIMessage("I will look into parcel 4417.")]
    )
    retriever = OctopusRetriever(client=octopus, agent_id=str(agent.id), user_id="alice", top_k=3)
    documents = eventually(
        lambda: retriever.invoke("a delivery that got lost"),
        lambda docs: any("4417" in d.page_content for d in docs),
        "the lost parcel is recalled by meaning",
    )
    first = next(d for d in documents if "4417" in d.page_content)
    assert first.id and first.metadata["kind"] == "message" and first.metadata["score"] > 0

    model = RecordingChat(messages=iter(["It is on its way."]))
    prompt = ChatPromptTemplate.from_messages(
        [("system", "What you remember:\n{memory}"), ("human", "{question}")]
    )
    chain = {"memory": retriever | (lambda docs: "\n".join(d.page_content for d in docs)),
             "question": lambda q: q} | prompt | model
    assert chain.invoke("Where is my parcel?").content == "It is on its way."
    assert "parcel 4417 never arrived in Lisbon" in model.seen[-1][0].content


def test_knowledge_is_retrieved_and_errors_keep_their_code(
    octopus: Octopus, agent_spec: dict, url: str, admin: Octopus
) -> None:
    agent = octopus.create_agent(agent_spec)
    octopus.ingest_document(agent.id, {"source": "kitchen.md", "text": "The office kitchen is cleaned every Friday."})
    knowledge = OctopusRetriever(client=octopus, agent_id=str(agent.id), source="knowledge")
    documents = eventually(lambda: knowledge.invoke("when is the kitchen cleaned"), lambda d: len(d) > 0, "found")
    assert documents[0].metadata["source"] == "kitchen.md" and "Friday" in documents[0].page_content

    # Another tenant's key reaches nothing, and says so in LangChain's terms.
    tenant = admin.create_tenant({"name": f"py-{uuid.uuid4().hex[:12]}"})
    with Octopus(url, api_key=admin.create_api_key(tenant.id, {"name": "other"}).key) as other:
        stranger = OctopusRetriever(client=other, agent_id=str(agent.id), source="knowledge")
        with pytest.raises(LangChainException) as raised:
            stranger.invoke("kitchen")
        assert isinstance(raised.value, OctopusLangChainError)
        assert (raised.value.status, raised.value.code) == (404, "agent_not_found")
