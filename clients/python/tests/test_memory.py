"""The client against the server: a tenant's memory, end to end."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from octopus_client import AsyncOctopus, Octopus, OctopusError, TextDelta, TurnDone, models

from conftest import eventually, required


def text_of(message: models.Message) -> str:
    content = message.content
    return content if isinstance(content, str) else "".join(part.text or "" for part in content or [])


def test_messages_are_stored_and_recalled_by_meaning(octopus: Octopus, agent_spec: dict) -> None:
    agent = octopus.create_agent(agent_spec)
    assert isinstance(agent, models.Agent) and agent.name == "support"
    conversation = octopus.create_conversation({"agent_id": agent.id, "user_id": "alice"})
    stored = octopus.append_messages(
        conversation.id,
        {"messages": [
            {"role": "user", "content": "My parcel 4417 never arrived in Lisbon."},
            {"role": "assistant", "content": "I am sorry; I will look into parcel 4417."},
        ]},
    )
    assert [m.role for m in stored.messages] == [models.Role.user, models.Role.assistant]

    users = octopus.list_users(agent.id)
    assert [(u.user_id, u.conversation_count) for u in users] == [("alice", 1)]
    episodes = octopus.list_episodes(conversation_id=conversation.id)
    assert len(episodes) == 1
    episode = octopus.get_episode(episodes[0].id)
    assert [text_of(m) for m in episode.messages][0] == "My parcel 4417 never arrived in Lisbon."

    hits = octopus.search_messages("Lisbon", user_id="alice")
    assert len(hits) == 1 and hits[0].message.conversation_id == conversation.id

    recalled = eventually(
        lambda: octopus.recall(agent.id, {"user_id": "alice", "query": "a delivery that got lost"}),
        lambda hits: any("4417" in text_of(h.window.message) for h in hits if h.window),
        "the lost parcel is recalled by meaning",
    )
    assert all(hit.score > 0 for hit in recalled)
    explained = octopus.recall(agent.id, {"user_id": "alice", "query": "parcel 4417", "explain": True})
    why = next(h.explanation for h in explained if h.window and "4417" in text_of(h.window.message))
    assert models.RecallSearch.keyword in [found.search for found in why.found_by], why
    assert abs(sum(found.contribution for found in why.found_by) - why.fused) < 1e-9
    assert recalled[0].explanation is None
    # Another user of the same agent remembers nothing of alice's.
    assert octopus.recall(agent.id, {"user_id": "bob", "query": "a delivery that got lost"}) == []


def exports() -> Path:
    """The folder of the ChatGPT and Claude exports the test command gives."""
    return Path(required("OCTOPUS_TEST_CHAT_EXPORTS"))


def test_a_claude_export_is_imported_once_and_recalled(octopus: Octopus, agent_spec: dict) -> None:
    agent = octopus.create_agent(agent_spec)
    export = (exports() / "claude.json").read_bytes()
    first = octopus.import_chats(export, format="claude", agent_id=agent.id, user_id="ana")
    assert (first.imported, first.already_imported, first.messages) == (2, 0, 4)
    assert first.conversations[0].title == "Rent in the budget sheet"
    assert first.conversations[0].status == models.ImportStatus.imported
    again = octopus.import_chats(export, format="claude", agent_id=agent.id, user_id="ana")
    assert (again.imported, again.already_imported, again.messages) == (0, 2, 0)
    assert {c.conversation_id for c in again.conversations} == {c.conversation_id for c in first.conversations}
    eventually(
        lambda: octopus.recall(agent.id, {"user_id": "ana", "query": "what does my cat eat?"}),
        lambda hits: any("salmon kibble" in (hit.text or "") for hit in hits),
        "an imported conversation is recalled by meaning",
    )
    with pytest.raises(OctopusError) as refused:
        octopus.import_chats(export[: len(export) // 2], format="claude", agent_id=agent.id, user_id="bo")
    assert refused.value.status == 422 and "line" in str(refused.value)
    assert octopus.list_conversations(user_id="bo") == []


def test_the_context_shows_what_the_model_would_see(octopus: Octopus, agent_spec: dict) -> None:
    agent = octopus.create_agent(agent_spec)
    conversation = octopus.create_conversation({"agent_id": agent.id, "user_id": "alice"})
    octopus.append_messages(conversation.id, {"role": "user", "content": "I prefer email over phone calls."})
    context = octopus.build_context(conversation.id, {"message": "How should you contact me?"})
    assert context.messages[0].role == models.ChatRole.system
    assert "You are Acme's support agent." in str(context.messages[0].content)
    assert str(context.messages[-1].content) == "How should you contact me?"
    blocks = {b.block: b for b in context.trace.blocks}
    assert blocks[models.Block.history].items == 1
    # The whole prompt is its blocks and the reply's priming, within the budget.
    assert sum(b.tokens for b in context.trace.blocks) < context.trace.total_tokens <= context.trace.budget


def test_a_streamed_turn_yields_the_reply_as_it_is_written(octopus: Octopus, agent_spec: dict) -> None:
    agent = octopus.create_agent(agent_spec)
    conversation = octopus.create_conversation({"agent_id": agent.id, "user_id": "alice"})
    events = list(octopus.stream_turn(conversation.id, {"message": "where is my parcel"}))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1, "the reply came in pieces"
    assert isinstance(events[-1], TurnDone)
    reply = events[-1].reply
    assert "".join(deltas) == text_of(reply.reply) == "echo: where is my parcel"
    # Both sides of the turn were stored.
    whole = octopus.take_turn(conversation.id, {"message": "thanks"})
    assert text_of(whole.reply) == "echo: thanks"
    episode = octopus.get_episode(whole.episode_id)
    assert [text_of(m) for m in episode.messages] == [
        "where is my parcel", "echo: where is my parcel", "thanks", "echo: thanks",
    ]


def test_knowledge_is_searched_in_every_mode(octopus: Octopus, agent_spec: dict) -> None:
    agent = octopus.create_agent(agent_spec)
    ingested = octopus.ingest_document(agent.id, {
        "source": "refunds.md",
        "category": "policy",
        "text": "# Refunds\n\nRefunds are paid within five working days of the return.",
    })
    assert ingested.chunks >= 1
    octopus.ingest_document(agent.id, {"source": "shipping.md", "text": "Parcels ship from Porto every Monday."})
    documents = octopus.list_documents(agent.id)
    assert [d.source for d in documents] == ["refunds.md", "shipping.md"]
    document = octopus.read_document(agent.id, "refunds.md")
    assert "five working days" in "".join(c.content for c in document.chunks)

    for mode in ("vector", "keyword", "hybrid"):
        hits = octopus.search_knowledge(agent.id, {"query": "refunds paid", "mode": mode, "top_k": 1})
        assert [h.chunk.source for h in hits] == ["refunds.md"], mode
        assert hits[0].score > 0
    hybrid = octopus.search_knowledge(agent.id, {"query": "refunds paid", "mode": "hybrid"})[0]
    assert hybrid.vector_score is not None and hybrid.keyword_score is not None
    assert octopus.search_knowledge(agent.id, {"query": "refunds", "category": "faq"}) == []


def test_a_procedure_waits_for_approval_and_keeps_its_versions(octopus: Octopus, agent_spec: dict) -> None:
    agent = octopus.create_agent(agent_spec)
    created = octopus.create_procedure({
        "agent_id": agent.id,
        "name": "refund",
        "trigger_pattern": "(?i)refund",
        "steps": [{"instruction": "Ask for the order number"}],
    })
    assert created.pending_version == 1 and created.serving_version is None
    assert octopus.list_procedures(approved=True) == []
    approved = octopus.approve_procedure(created.id)
    assert approved.serving_version == 1 and approved.pending_version is None
    changed = octopus.update_procedure(created.id, {"steps": [{"instruction": "Ask for the receipt"}]})
    assert changed.pending_version == 2 and changed.serving_version == 1
    rejected = octopus.reject_procedure(created.id)
    assert rejected.serving_version == 1 and rejected.pending_version is None
    octopus.update_procedure(created.id, {"steps": [{"instruction": "Ask for the receipt"}]})
    octopus.approve_procedure(created.id)
    rolled_back = octopus.rollback_procedure(created.id, {"version": 1})
    assert rolled_back.serving_version == 1
    assert rolled_back.steps[0].instruction == "Ask for the order number"
    statuses = [(v.version, v.status) for v in octopus.procedure_versions(created.id)]
    assert (2, models.VersionStatus.rejected) in statuses
    assert len(statuses) == 3


def test_errors_carry_the_apis_code(octopus: Octopus, agent_spec: dict) -> None:
    with pytest.raises(OctopusError) as missing:
        octopus.get_agent(uuid.uuid4())
    assert (missing.value.status, missing.value.code) == (404, "agent_not_found")
    with pytest.raises(OctopusError) as invalid:
        octopus.create_agent({**agent_spec, "name": ""})
    assert (invalid.value.status, invalid.value.code, invalid.value.field) == (422, "invalid_request", "name")
    # Nothing was stored by the refused request.
    assert octopus.list_agents() == []
    with pytest.raises(OctopusError) as keyless:
        Octopus(octopus.base_url, api_key="").list_agents()
    assert keyless.value.code == "unauthenticated"


def test_forgetting_a_user_and_moving_a_dump(octopus: Octopus, agent_spec: dict, admin: Octopus) -> None:
    agent = octopus.create_agent(agent_spec)
    for user in ("alice", "bob"):
        conversation = octopus.create_conversation({"agent_id": agent.id, "user_id": user})
        octopus.append_messages(conversation.id, {"role": "user", "content": f"I am {user}."})
    dump = octopus.export_dump()
    assert dump.count("\n") > 4 and '"octopus-dump"' in dump.splitlines()[0]

    receipt = octopus.forget_user("alice")
    assert receipt.user_id == "alice" and receipt.relational.messages == 1
    assert [u.user_id for u in octopus.list_users(agent.id)] == ["bob"]

    tenant = admin.create_tenant({"name": f"copy-{uuid.uuid4().hex[:8]}"})
    copy_key = admin.create_api_key(tenant.id, {"name": "copy"}).key
    with Octopus(octopus.base_url, api_key=copy_key) as copy:
        imported = copy.import_dump(dump)
        assert imported.tenant_id == tenant.id
        copied_agent = copy.list_agents()[0]
        assert [u.user_id for u in copy.list_users(copied_agent.id)] == ["alice", "bob"]

        # The copy deleted by the operator: its messages counted, its key refused.
        deleted = admin.delete_tenant(tenant.id)
        assert (deleted.tenant_id, deleted.relational.messages) == (tenant.id, 2)
        with pytest.raises(OctopusError) as refused:
            copy.list_agents()
        assert refused.value.code == "unauthenticated"


def with_a_fact(dump: str, text: str) -> str:
    """The dump with one fact more, about the user of its first episode: how
    a fact the model learned travels between servers."""
    import json

    lines = [json.loads(line) for line in dump.splitlines() if line]
    episode = next(record for record in lines if record["type"] == "episode")
    end = lines.pop()
    lines.append({
        "type": "fact", "id": str(uuid.uuid4()), "tenant_id": lines[0]["tenant_id"],
        "agent_id": episode["agent_id"], "user_id": episode["user_id"], "episode_id": episode["id"],
        "message_ids": [], "text": text, "valid_from": episode["started_at"], "valid_to": None,
        "superseded_by": None, "created_at": episode["started_at"],
    })
    lines.append({**end, "records": end["records"] + 1})
    return "\n".join(json.dumps(line) for line in lines)


def test_a_fact_is_corrected_and_deleted_with_its_history(octopus: Octopus, agent_spec: dict, admin: Octopus) -> None:
    agent = octopus.create_agent(agent_spec)
    conversation = octopus.create_conversation({"agent_id": agent.id, "user_id": "dana"})
    octopus.append_messages(conversation.id, {"role": "user", "content": "I live in Lyon."})
    dump = with_a_fact(octopus.export_dump(), "Dana lives in Lyon")
    tenant = admin.create_tenant({"name": f"facts-{uuid.uuid4().hex[:8]}"})
    key = admin.create_api_key(tenant.id, {"name": "support-desk"}).key
    with Octopus(octopus.base_url, api_key=key) as desk:
        desk.import_dump(dump)
        copied = desk.list_agents()[0]
        [lyon] = desk.list_facts(copied.id, "dana")
        assert desk.get_fact(lyon.id).text == "Dana lives in Lyon"

        paris = desk.correct_fact(lyon.id, {"text": "Dana lives in Paris", "reason": "she moved"})
        assert (paris.text, paris.source.value, paris.changed_by) == ("Dana lives in Paris", "manual", "support-desk")
        assert [f.text for f in desk.list_facts(copied.id, "dana")] == ["Dana lives in Paris"]
        with pytest.raises(OctopusError) as replaced:
            desk.correct_fact(lyon.id, {"text": "Dana lives in Nice"})
        assert (replaced.value.status, replaced.value.code) == (409, "fact_replaced")
        with pytest.raises(OctopusError) as blank:
            desk.correct_fact(paris.id, {"text": ""})
        assert (blank.value.status, blank.value.field) == (422, "text")

        history = desk.fact_history(paris.id)
        assert [(e.action.value, e.text, e.changed_by) for e in history] == [
            ("imported", "Dana lives in Lyon", "model"),
            ("corrected", "Dana lives in Paris", "support-desk"),
        ]
        added = desk.add_fact(copied.id, "dana", {"text": "Dana is allergic to peanuts", "reason": "she called"})
        assert (added.source.value, added.episode_id, added.changed_by) == ("manual", None, "support-desk")
        profile = desk.user_profile(copied.id, "dana")
        assert [f.text for group in profile.facts for f in group.facts] == [
            "Dana is allergic to peanuts", "Dana lives in Paris",
        ]
        assert (profile.activity.conversations, profile.activity.messages) == (1, 1)
        with pytest.raises(OctopusError) as nobody:
            desk.user_profile(copied.id, "erin")
        assert (nobody.value.status, nobody.value.code) == (404, "user_not_found")
        with pytest.raises(OctopusError) as unknown:
            desk.add_fact(copied.id, "dana", {"text": "Dana runs", "category": "sports"})
        assert (unknown.value.status, unknown.value.code) == (409, "unknown_fact_category")
        assert desk.delete_fact(added.id).versions == 1
        receipt = desk.delete_fact(paris.id, reason="asked")
        assert (receipt.versions, receipt.compacted) == (2, True)
        assert desk.list_facts(copied.id, "dana", include_replaced=True) == []
        assert [(e.action.value, e.text) for e in desk.fact_history(lyon.id)] == [
            ("imported", None), ("corrected", None), ("deleted", None),
        ]


def test_a_message_is_erased(octopus: Octopus, agent_spec: dict) -> None:
    agent = octopus.create_agent(agent_spec)
    conversation = octopus.create_conversation({"agent_id": agent.id, "user_id": "erin"})
    said = octopus.append_messages(conversation.id, {"messages": [
        {"role": "user", "content": "My locker code is 4471."},
        {"role": "user", "content": "I like tea."},
    ]}).messages
    receipt = octopus.erase_message(said[0].id, reason="she asked")
    assert (receipt.message_id, receipt.facts_deleted, receipt.compacted) == (said[0].id, 0, True)
    episode = octopus.get_episode(said[0].episode_id)
    assert [text_of(m) for m in episode.messages] == ["I like tea."]
    with pytest.raises(OctopusError) as gone:
        octopus.erase_message(said[0].id)
    assert (gone.value.status, gone.value.code) == (404, "message_not_found")


def test_the_async_client_does_the_same(url: str, tenant_key: str, agent_spec: dict) -> None:
    async def scenario() -> None:
        async with AsyncOctopus(url, api_key=tenant_key) as octopus:
            agent = await octopus.create_agent(agent_spec)
            conversation = await octopus.create_conversation({"agent_id": agent.id, "user_id": "carol"})
            pieces = []
            async for event in octopus.stream_turn(conversation.id, {"message": "hello there"}):
                if isinstance(event, TextDelta):
                    pieces.append(event.text)
                else:
                    assert text_of(event.reply.reply) == "echo: hello there"
            assert "".join(pieces) == "echo: hello there"
            users = await octopus.list_users(agent.id)
            assert [(u.user_id, u.conversation_count) for u in users] == [("carol", 1)]
            with pytest.raises(OctopusError) as gone:
                await octopus.get_conversation(uuid.uuid4())
            assert gone.value.code == "conversation_not_found"

    asyncio.run(scenario())
