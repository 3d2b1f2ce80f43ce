"""LangGraph with Octopus: a graph's long-term memory store is Octopus's
facts, read back over the REST API, searched by meaning, and what one thread
stored reaches the model of another (LangChain's own fake chat model). Run
with the pinned ``langgraph``."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, TypedDict

import pytest
from conftest import eventually
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from octopus_client import Octopus, OctopusError
from octopus_client.langgraph import OctopusStore


class RecordingChat(GenericFakeChatModel):
    """LangChain's fake chat model, keeping every prompt it was given."""

    seen: list[Any] = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # noqa: ANN001
        self.seen.append(messages)
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


@pytest.fixture()
def agent_id(octopus: Octopus, agent_spec: dict) -> str:
    return str(octopus.create_agent({**agent_spec, "memory": {"fact_categories": ["food"]}}).id)


def test_items_are_facts_read_back_over_the_api(octopus: Octopus, agent_id: str) -> None:
    store = OctopusStore(octopus, agent_id)
    store.put(("alice", "food"), "diet", {"content": "Alice is vegetarian"})
    [fact] = octopus.list_facts(agent_id, "alice", key="diet")
    assert (fact.text, fact.category, fact.key, fact.source.value) == ("Alice is vegetarian", "food", "diet", "manual")
    item = store.get(("alice", "food"), "diet")
    assert (item.namespace, item.key, item.value) == (("alice", "food"), "diet", {"content": "Alice is vegetarian"})
    assert store.get(("alice",), "diet") is None, "another namespace, another item"

    # Put again: a correction, the old version kept in the fact's history.
    store.put(("alice", "food"), "diet", {"content": "Alice is pescatarian"})
    versions = octopus.list_facts(agent_id, "alice", key="diet", include_replaced=True)
    assert sorted(v.text for v in versions) == ["Alice is pescatarian", "Alice is vegetarian"]
    assert store.get(("alice", "food"), "diet").value == {"content": "Alice is pescatarian"}

    # A value of more fields is kept whole, and filtered on.
    store.put(("alice",), "settings", {"theme": "dark", "level": 3})
    assert store.get(("alice",), "settings").value == {"theme": "dark", "level": 3}
    assert [i.key for i in store.search(("alice",), filter={"level": {"$gte": 2}})] == ["settings"]
    assert store.search(("alice",), filter={"theme": "light"}) == []

    # What Octopus holds without a key is an item too, keyed by its id.
    porto = octopus.add_fact(agent_id, "alice", {"text": "Alice lives in Porto"})
    assert store.get(("alice",), str(porto.id)).value == {"content": "Alice lives in Porto"}
    assert {i.key for i in store.search(("alice",))} == {"settings", str(porto.id), "diet"}
    assert [i.key for i in store.search(("alice", "food"))] == ["diet"]
    assert store.list_namespaces(prefix=("alice",)) == [("alice",), ("alice", "food")]
    assert store.list_namespaces(prefix=("alice",), max_depth=1) == [("alice",)]
    assert store.list_namespaces(prefix=("alice",), suffix=("food",)) == [("alice", "food")]
    with pytest.raises(ValueError):
        store.list_namespaces()

    store.delete(("alice", "food"), "diet")
    assert store.get(("alice", "food"), "diet") is None
    assert octopus.list_facts(agent_id, "alice", key="diet", include_replaced=True) == []


def test_search_is_by_meaning_and_errors_keep_their_code(
    octopus: Octopus, agent_id: str, url: str, admin: Octopus
) -> None:
    store = OctopusStore(octopus, agent_id)
    store.put(("bob", "food"), "allergy", {"content": "Bob is allergic to peanuts"})
    store.put(("bob",), "home", {"content": "Bob lives in Lyon"})
    found = eventually(
        lambda: store.search(("bob",), query="which nuts must he avoid", limit=1),
        lambda items: len(items) == 1 and items[0].key == "allergy",
        "the allergy is found by meaning",
    )
    assert found[0].score > 0 and found[0].namespace == ("bob", "food")
    # The asynchronous operations are the same ones.
    assert asyncio.run(store.asearch(("bob",), query="which nuts must he avoid", limit=1)) == found
    assert asyncio.run(store.aget(("bob",), "home")).value == {"content": "Bob lives in Lyon"}

    with pytest.raises(OctopusError) as unknown:
        store.put(("bob", "sports"), "team", {"content": "Bob supports Lyon"})
    assert (unknown.value.status, unknown.value.code) == (409, "unknown_fact_category")
    with pytest.raises(ValueError):
        store.search((), query="anything")

    # Another tenant's key reaches nothing.
    tenant = admin.create_tenant({"name": f"py-{uuid.uuid4().hex[:12]}"})
    with Octopus(url, api_key=admin.create_api_key(tenant.id, {"name": "other"}).key) as other:
        with pytest.raises(OctopusError) as raised:
            OctopusStore(other, agent_id).get(("bob", "food"), "allergy")
        assert (raised.value.status, raised.value.code) == (404, "agent_not_found")


class State(TypedDict):
    question: str
    answer: str


def test_a_graph_remembers_across_threads(octopus: Octopus, agent_id: str) -> None:
    model = RecordingChat(messages=iter(["Noted.", "No peanuts for you."]))

    def chat(state: State, config: RunnableConfig, *, store: BaseStore) -> dict:
        user = config["configurable"]["user_id"]
        if state["question"].startswith("Remember: "):
            store.put((user, "food"), "allergy", {"content": state["question"].removeprefix("Remember: ")})
        remembered = "\n".join(i.value["content"] for i in store.search((user,), query=state["question"], limit=3))
        reply = model.invoke([SystemMessage(f"What you know of the user:\n{remembered}"),
                              HumanMessage(state["question"])])
        return {"answer": reply.content}

    graph = StateGraph(State).add_node("chat", chat).add_edge(START, "chat").add_edge("chat", END)
    app = graph.compile(store=OctopusStore(octopus, agent_id), checkpointer=InMemorySaver())
    first = {"configurable": {"thread_id": "1", "user_id": "carol"}}
    app.invoke({"question": "Remember: Carol is allergic to peanuts"}, first)
    assert [f.text for f in octopus.list_facts(agent_id, "carol")] == ["Carol is allergic to peanuts"]

    # Another thread, and the graph run asynchronously: the memory reaches
    # the model once Octopus embedded it.
    second = {"configurable": {"thread_id": "2", "user_id": "carol"}}
    eventually(
        lambda: OctopusStore(octopus, agent_id).search(("carol",), query="Can I have the satay sauce?"),
        lambda items: len(items) == 1,
        "the allergy is embedded",
    )
    result = asyncio.run(app.ainvoke({"question": "Can I have the satay sauce?"}, second))
    assert result["answer"] == "No peanuts for you."
    assert "Carol is allergic to peanuts" in model.seen[-1][0].content
