"""The synchronous client: one method per operation of the Octopus API.

Written by ``scripts/generate.py`` from ``_async_client.py``; do not edit.
"""


from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

import httpx

from . import models
from ._common import DEFAULT_URL, Body, Id, Model, EventStream, error_of, payload_of, query_of, segment
from .events import TurnEvent

class Octopus:
    """A client of one Octopus server, with one key: a tenant's, or the admin key.

    ``base_url`` defaults to ``$OCTOPUS_URL`` (else ``http://127.0.0.1:7700``)
    and ``api_key`` to ``$OCTOPUS_API_KEY``. Every method raises
    :class:`OctopusError` when the server answers with an error.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.base_url = (base_url or os.environ.get("OCTOPUS_URL") or DEFAULT_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("OCTOPUS_API_KEY")
        headers = {"authorization": f"Bearer {key}"} if key else {}
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout)
        self._headers = headers

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Octopus:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json_body: Any = None,
        content: str | bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        response = self._http.request(
            method,
            self.base_url + path,
            params=params,
            json=json_body,
            content=content,
            headers={**self._headers, **(headers or {})},
        )
        if response.is_error:
            raise error_of(response)
        return response

    def _get(self, path: str, model: type[Model], **params: Any) -> Model:
        response = self._send("GET", path, params=query_of(**params))
        return model.model_validate(response.json())

    def _post(self, path: str, body: Body | None, model: type[Model]) -> Model:
        payload = payload_of(body) if body is not None else None
        response = self._send("POST", path, json_body=payload)
        return model.model_validate(response.json())

    # Health and operations

    def healthz(self) -> dict[str, Any]:
        """Whether the process is up."""
        return (self._send("GET", "/healthz")).json()

    def health(self) -> dict[str, Any]:
        """Whether the process is up (as ``healthz``)."""
        return (self._send("GET", "/health")).json()

    def status(self, *, agent_id: Id | None = None) -> models.ServerStatus:
        """The server's version, storage and embedding model, and the memory
        work waiting for the caller's tenant (every tenant's, with the admin
        key): recall finds new messages by meaning once ``waiting`` is 0.
        With ``agent_id``, whether that agent's model can be called."""
        return self._get("/v1/status", models.ServerStatus, agent_id=agent_id)

    def readyz(self) -> dict[str, Any]:
        """Whether the server can serve: its storage answers."""
        return (self._send("GET", "/readyz")).json()

    def metrics(self) -> str:
        """The Prometheus metrics (admin key)."""
        return (self._send("GET", "/metrics")).text

    # Tenants and keys (admin key)

    def list_tenants(self, *, limit: int | None = None, offset: int | None = None) -> list[models.Tenant]:
        return (self._get("/v1/tenants", models.ItemsTenant, limit=limit, offset=offset)).items

    def create_tenant(self, body: models.CreateTenant | Mapping[str, Any]) -> models.Tenant:
        return self._post("/v1/tenants", body, models.Tenant)

    def get_tenant(self, tenant_id: Id) -> models.Tenant:
        return self._get(f"/v1/tenants/{segment(tenant_id)}", models.Tenant)

    def delete_tenant(self, tenant_id: Id) -> models.TenantDeletionReceipt:
        """Delete a tenant and everything under it (admin key). Cannot be undone."""
        response = self._send("DELETE", f"/v1/tenants/{segment(tenant_id)}")
        return models.TenantDeletionReceipt.model_validate(response.json())

    def list_api_keys(self, tenant_id: Id) -> list[models.ApiKey]:
        return (self._get(f"/v1/tenants/{segment(tenant_id)}/keys", models.ItemsApiKey)).items

    def create_api_key(
        self, tenant_id: Id, body: models.CreateApiKey | Mapping[str, Any]
    ) -> models.CreatedApiKey:
        """A new key for the tenant; its secret is in the answer, and only there."""
        return self._post(f"/v1/tenants/{segment(tenant_id)}/keys", body, models.CreatedApiKey)

    def revoke_api_key(self, tenant_id: Id, key_id: Id) -> None:
        self._send("DELETE", f"/v1/tenants/{segment(tenant_id)}/keys/{segment(key_id)}")

    def export_tenant_dump(self, tenant_id: Id, *, user_id: str | None = None) -> str:
        """A tenant's data (or one user's), as a dump: JSON Lines."""
        path = f"/v1/tenants/{segment(tenant_id)}/export"
        return (self._send("GET", path, params=query_of(user_id=user_id))).text

    # Agents

    def list_agents(self, *, limit: int | None = None, offset: int | None = None) -> list[models.Agent]:
        return (self._get("/v1/agents", models.ItemsAgent, limit=limit, offset=offset)).items

    def create_agent(self, body: models.AgentSpec | Mapping[str, Any]) -> models.Agent:
        return self._post("/v1/agents", body, models.Agent)

    def get_agent(self, agent_id: Id) -> models.Agent:
        return self._get(f"/v1/agents/{segment(agent_id)}", models.Agent)

    def update_agent(self, agent_id: Id, patch: Mapping[str, Any]) -> models.Agent:
        """A JSON merge patch: the fields given replace the agent's, ``llm`` and
        ``memory`` merge field by field, and ``None`` resets an optional field."""
        response = self._send("PATCH", f"/v1/agents/{segment(agent_id)}", json_body=dict(patch))
        return models.Agent.model_validate(response.json())

    def delete_agent(self, agent_id: Id) -> None:
        self._send("DELETE", f"/v1/agents/{segment(agent_id)}")

    # Users

    def list_users(
        self, agent_id: Id, *, limit: int | None = None, offset: int | None = None
    ) -> list[models.UserSummary]:
        path = f"/v1/agents/{segment(agent_id)}/users"
        return (self._get(path, models.ItemsUserSummary, limit=limit, offset=offset)).items

    def user_profile(self, agent_id: Id, user_id: str) -> models.UserProfile:
        """What holds about a user now: instructions, preferences, facts by
        category, recent conversations a line each, and how much they talked."""
        path = f"/v1/agents/{segment(agent_id)}/users/{segment(user_id)}/profile"
        return self._get(path, models.UserProfile)

    def list_facts(
        self,
        agent_id: Id,
        user_id: str,
        *,
        include_replaced: bool | None = None,
        category: str | None = None,
        key: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[models.Fact]:
        path = f"/v1/agents/{segment(agent_id)}/users/{segment(user_id)}/facts"
        page = self._get(
            path,
            models.ItemsFact,
            include_replaced=include_replaced,
            category=category,
            key=key,
            limit=limit,
            offset=offset,
        )
        return page.items

    def add_fact(
        self, agent_id: Id, user_id: str, body: models.NewFactSpec | Mapping[str, Any]
    ) -> models.Fact:
        """Add a fact about a user by hand (``source: manual``, of no conversation)."""
        path = f"/v1/agents/{segment(agent_id)}/users/{segment(user_id)}/facts"
        return self._post(path, body, models.Fact)

    def forget_user(self, user_id: str, *, agent_id: Id | None = None) -> models.ForgetReceipt:
        """Erase everything about a user (or what they said to one agent). Cannot be undone."""
        response = self._send("DELETE", f"/v1/users/{segment(user_id)}", params=query_of(agent_id=agent_id))
        return models.ForgetReceipt.model_validate(response.json())

    # Facts, one at a time

    def get_fact(self, fact_id: Id) -> models.Fact:
        return self._get(f"/v1/facts/{segment(fact_id)}", models.Fact)

    def correct_fact(self, fact_id: Id, body: Mapping[str, Any]) -> models.Fact:
        """Correct a fact that holds (``{"text", "reason"?, "valid_from"?}``):
        returns the new version, which replaces it; the old version is kept in
        the fact's history."""
        response = self._send("PATCH", f"/v1/facts/{segment(fact_id)}", json_body=dict(body))
        return models.Fact.model_validate(response.json())

    def delete_fact(self, fact_id: Id, *, reason: str | None = None) -> models.FactDeletionReceipt:
        """Delete a fact, every version of it, from every store. Cannot be undone."""
        response = self._send("DELETE", f"/v1/facts/{segment(fact_id)}", params=query_of(reason=reason))
        return models.FactDeletionReceipt.model_validate(response.json())

    def fact_history(self, fact_id: Id) -> list[models.FactHistoryEntry]:
        path = f"/v1/facts/{segment(fact_id)}/history"
        return (self._get(path, models.ItemsFactHistoryEntry)).items

    # Webhooks: signed events when memory changes

    def create_webhook(
        self, body: models.NewWebhook | Mapping[str, Any]
    ) -> models.CreatedWebhook:
        """Register an endpoint for events; the answer holds its signing
        secret (``whsec_…``), shown this once. Verify each delivery with it
        (any Standard Webhooks library, e.g. PyPI ``standardwebhooks``)."""
        return self._post("/v1/webhooks", body, models.CreatedWebhook)

    def list_webhooks(self) -> list[models.WebhookInfo]:
        return (self._get("/v1/webhooks", models.ItemsWebhookInfo)).items

    def get_webhook(self, webhook_id: Id) -> models.WebhookInfo:
        return self._get(f"/v1/webhooks/{segment(webhook_id)}", models.WebhookInfo)

    def delete_webhook(self, webhook_id: Id) -> None:
        """Delete an endpoint and its delivery log."""
        self._send("DELETE", f"/v1/webhooks/{segment(webhook_id)}")

    def enable_webhook(self, webhook_id: Id) -> models.WebhookInfo:
        """Enable an endpoint that was disabled: what is written from now on is delivered."""
        return self._post(f"/v1/webhooks/{segment(webhook_id)}/enable", None, models.WebhookInfo)

    def list_deliveries(
        self, webhook_id: Id, *, limit: int | None = None, offset: int | None = None
    ) -> list[models.Delivery]:
        """An endpoint's deliveries, newest first: state, attempts, last status and error."""
        path = f"/v1/webhooks/{segment(webhook_id)}/deliveries"
        return (self._get(path, models.ItemsDelivery, limit=limit, offset=offset)).items

    # Conversations, messages and turns

    def list_conversations(
        self,
        *,
        agent_id: Id | None = None,
        user_id: str | None = None,
        include_deleted: bool | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[models.Conversation]:
        page = self._get(
            "/v1/conversations",
            models.ItemsConversation,
            agent_id=agent_id,
            user_id=user_id,
            include_deleted=include_deleted,
            limit=limit,
            offset=offset,
        )
        return page.items

    def create_conversation(self, body: models.ConversationSpec | Mapping[str, Any]) -> models.Conversation:
        return self._post("/v1/conversations", body, models.Conversation)

    def import_conversation(
        self, body: models.ConversationImport | Mapping[str, Any]
    ) -> models.ImportResponse:
        """Past conversations with their original timestamps: one episode per session."""
        return self._post("/v1/conversations/import", body, models.ImportResponse)

    def import_chats(
        self, export: str | bytes, *, format: str, agent_id: Id, user_id: str
    ) -> models.ChatsImported:
        """A person's conversations from a ChatGPT or Claude data export (its
        ``conversations.json``, as it is; ``format`` is ``"chatgpt"`` or
        ``"claude"``) as their past with the agent. Importing the same
        conversations again adds nothing."""
        response = self._send(
            "POST",
            f"/v1/conversations/import/{segment(format)}",
            params=query_of(agent_id=agent_id, user_id=user_id),
            content=export,
            headers={"content-type": "application/json"},
        )
        return models.ChatsImported.model_validate(response.json())

    def get_conversation(self, conversation_id: Id) -> models.Conversation:
        return self._get(f"/v1/conversations/{segment(conversation_id)}", models.Conversation)

    def delete_conversation(self, conversation_id: Id) -> None:
        self._send("DELETE", f"/v1/conversations/{segment(conversation_id)}")

    def append_messages(
        self,
        conversation_id: Id,
        body: models.AppendMessagesRequest | models.NewMessage | Mapping[str, Any],
    ) -> models.AppendedMessages:
        """Store messages (``{"messages": [...]}``, or one message) in the conversation."""
        path = f"/v1/conversations/{segment(conversation_id)}/messages"
        return self._post(path, body, models.AppendedMessages)

    def erase_message(self, message_id: Id, *, reason: str | None = None) -> models.MessageErasureReceipt:
        """Erase one message from every store, with the facts learned from it. Cannot be undone."""
        response = self._send("DELETE", f"/v1/messages/{segment(message_id)}", params=query_of(reason=reason))
        return models.MessageErasureReceipt.model_validate(response.json())

    def build_context(
        self, conversation_id: Id, body: models.ContextRequest | Mapping[str, Any]
    ) -> models.ContextResponse:
        """The working memory for the user's next message: what the model would see, and why."""
        path = f"/v1/conversations/{segment(conversation_id)}/context"
        return self._post(path, body, models.ContextResponse)

    def take_turn(
        self, conversation_id: Id, body: models.TurnRequest | Mapping[str, Any]
    ) -> models.TurnReply:
        """One turn: the message goes to the agent's model with its working memory."""
        payload = {**payload_of(body), "stream": False}
        path = f"/v1/conversations/{segment(conversation_id)}/turns"
        response = self._send("POST", path, json_body=payload)
        return models.TurnReply.model_validate(response.json())

    def stream_turn(
        self, conversation_id: Id, body: models.TurnRequest | Mapping[str, Any]
    ) -> Iterator[TurnEvent]:
        """One turn, streamed: :class:`TextDelta` pieces as the model writes,
        then :class:`TurnDone` with the whole reply. A failure after the
        stream began raises :class:`OctopusError` (with status 0 unless the
        server named one)."""
        payload = {**payload_of(body), "stream": True}
        url = f"{self.base_url}/v1/conversations/{segment(conversation_id)}/turns"
        with self._http.stream("POST", url, json=payload, headers=self._headers) as response:
            if response.is_error:
                response.read()
                raise error_of(response)
            events = EventStream()
            for line in response.iter_lines():
                event = events.feed(line)
                if event is not None:
                    yield event

    # Episodes

    def list_episodes(
        self,
        *,
        agent_id: Id | None = None,
        user_id: str | None = None,
        conversation_id: Id | None = None,
        from_: str | None = None,
        to: str | None = None,
        deleted: bool | None = None,
        archived: bool | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[models.Episode]:
        page = self._get(
            "/v1/episodes",
            models.ItemsEpisode,
            agent_id=agent_id,
            user_id=user_id,
            conversation_id=conversation_id,
            from_=from_,
            to=to,
            deleted=deleted,
            archived=archived,
            limit=limit,
            offset=offset,
        )
        return page.items

    def get_episode(self, episode_id: Id) -> models.EpisodeWithMessages:
        """An episode with its messages, summary and key facts."""
        return self._get(f"/v1/episodes/{segment(episode_id)}", models.EpisodeWithMessages)

    def close_episode(
        self, episode_id: Id, body: models.CloseEpisodeRequest | Mapping[str, Any]
    ) -> models.Episode:
        """Close the episode now (``end_reason``), with a summary of your own or one the model writes."""
        return self._post(f"/v1/episodes/{segment(episode_id)}/close", body, models.Episode)

    def set_episode_summary(
        self, episode_id: Id, body: models.EpisodeSummaryRequest | Mapping[str, Any]
    ) -> models.Episode:
        response = self._send("PUT", f"/v1/episodes/{segment(episode_id)}/summary", json_body=payload_of(body))
        return models.Episode.model_validate(response.json())

    def delete_episode(self, episode_id: Id) -> models.Episode:
        """Soft delete: the episode leaves search and recall, and can be restored."""
        response = self._send("DELETE", f"/v1/episodes/{segment(episode_id)}")
        return models.Episode.model_validate(response.json())

    def restore_episode(self, episode_id: Id) -> models.Episode:
        return self._post(f"/v1/episodes/{segment(episode_id)}/restore", None, models.Episode)

    def purge_episode(self, episode_id: Id) -> None:
        """Remove a soft-deleted episode for good."""
        self._send("POST", f"/v1/episodes/{segment(episode_id)}/purge")

    def propose_procedure(self, episode_id: Id) -> models.Procedure:
        """Ask the agent's model for a procedure learned from the episode; it waits for approval."""
        path = f"/v1/episodes/{segment(episode_id)}/procedures/propose"
        return self._post(path, None, models.Procedure)

    # Search and recall

    def search_messages(
        self,
        q: str,
        *,
        agent_id: Id | None = None,
        user_id: str | None = None,
        conversation_id: Id | None = None,
        from_: str | None = None,
        to: str | None = None,
        limit: int | None = None,
    ) -> list[models.MessageHit]:
        """Full-text search over messages, ranked by BM25."""
        page = self._get(
            "/v1/messages/search",
            models.ItemsMessageHit,
            q=q,
            agent_id=agent_id,
            user_id=user_id,
            conversation_id=conversation_id,
            from_=from_,
            to=to,
            limit=limit,
        )
        return page.items

    def recall(self, agent_id: Id, body: models.RecallQuery | Mapping[str, Any]) -> list[models.RecallHit]:
        """What the agent remembers of a user, by meaning and by words."""
        page = self._post(f"/v1/agents/{segment(agent_id)}/recall", body, models.ItemsRecallHit)
        return page.items

    # Knowledge

    def knowledge_info(self, agent_id: Id) -> models.KnowledgeInfo:
        return self._get(f"/v1/agents/{segment(agent_id)}/knowledge", models.KnowledgeInfo)

    def ingest_document(
        self, agent_id: Id, body: models.IngestRequest | Mapping[str, Any]
    ) -> models.IngestResponse:
        """Chunk, embed and store a document; a source ingested again replaces its chunks."""
        path = f"/v1/agents/{segment(agent_id)}/knowledge/documents"
        return self._post(path, body, models.IngestResponse)

    def list_documents(
        self, agent_id: Id, *, limit: int | None = None, offset: int | None = None
    ) -> list[models.DocumentSummary]:
        path = f"/v1/agents/{segment(agent_id)}/knowledge/documents"
        return (self._get(path, models.ItemsDocumentSummary, limit=limit, offset=offset)).items

    def read_document(self, agent_id: Id, source: str) -> models.Document:
        path = f"/v1/agents/{segment(agent_id)}/knowledge/document"
        return self._get(path, models.Document, source=source)

    def search_knowledge(
        self, agent_id: Id, body: models.KnowledgeSearchRequest | Mapping[str, Any]
    ) -> list[models.KnowledgeHit]:
        """Search by meaning, by words, or both (``mode``), each hit with its scores."""
        path = f"/v1/agents/{segment(agent_id)}/knowledge/search"
        return (self._post(path, body, models.ItemsKnowledgeHit)).items

    def delete_chunk(self, agent_id: Id, chunk_id: Id) -> None:
        self._send("DELETE", f"/v1/agents/{segment(agent_id)}/knowledge/chunks/{segment(chunk_id)}")

    # Procedures

    def list_procedures(
        self,
        *,
        agent_id: Id | None = None,
        shared: bool | None = None,
        active: bool | None = None,
        approved: bool | None = None,
        text: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[models.Procedure]:
        page = self._get(
            "/v1/procedures",
            models.ItemsProcedure,
            agent_id=agent_id,
            shared=shared,
            active=active,
            approved=approved,
            text=text,
            limit=limit,
            offset=offset,
        )
        return page.items

    def create_procedure(self, body: models.ProcedureSpec | Mapping[str, Any]) -> models.Procedure:
        """A new procedure; its first version waits for approval."""
        return self._post("/v1/procedures", body, models.Procedure)

    def get_procedure(self, procedure_id: Id) -> models.Procedure:
        return self._get(f"/v1/procedures/{segment(procedure_id)}", models.Procedure)

    def update_procedure(self, procedure_id: Id, patch: Mapping[str, Any]) -> models.Procedure:
        """A JSON merge patch; a change of its steps or trigger is a new version, pending approval."""
        response = self._send("PATCH", f"/v1/procedures/{segment(procedure_id)}", json_body=dict(patch))
        return models.Procedure.model_validate(response.json())

    def delete_procedure(self, procedure_id: Id) -> None:
        self._send("DELETE", f"/v1/procedures/{segment(procedure_id)}")

    def approve_procedure(self, procedure_id: Id) -> models.Procedure:
        """Approve the pending version: from now on it is the one served."""
        return self._post(f"/v1/procedures/{segment(procedure_id)}/approve", None, models.Procedure)

    def reject_procedure(self, procedure_id: Id) -> models.Procedure:
        return self._post(f"/v1/procedures/{segment(procedure_id)}/reject", None, models.Procedure)

    def rollback_procedure(
        self, procedure_id: Id, body: models.RollbackRequest | Mapping[str, Any]
    ) -> models.Procedure:
        """Serve an earlier approved version again."""
        return self._post(f"/v1/procedures/{segment(procedure_id)}/rollback", body, models.Procedure)

    def procedure_versions(self, procedure_id: Id) -> list[models.ProcedureVersion]:
        path = f"/v1/procedures/{segment(procedure_id)}/versions"
        return (self._get(path, models.ItemsProcedureVersion)).items

    # Dumps

    def export_dump(self, *, user_id: str | None = None) -> str:
        """The tenant's data (or one user's), as a dump: JSON Lines."""
        return (self._send("GET", "/v1/export", params=query_of(user_id=user_id))).text

    def import_dump(self, dump: str | bytes) -> models.DumpImported:
        """Import a dump whole, or nothing of it."""
        response = self._send(
            "POST", "/v1/import", content=dump, headers={"content-type": "application/x-ndjson"}
        )
        return models.DumpImported.model_validate(response.json())

    # The OpenAI-compatible door (the `openai` package speaks it in full, streams included)

    def list_models(self) -> dict[str, Any]:
        """The tenant's active agents, as OpenAI `model` objects."""
        return (self._send("GET", "/v1/models")).json()

    def chat_completion(
        self,
        body: Mapping[str, Any],
        *,
        user: str | None = None,
        conversation_id: Id | None = None,
    ) -> dict[str, Any]:
        """A whole `chat.completion` from an agent (``model`` names it)."""
        if body.get("stream"):
            raise ValueError("chat_completion answers whole; stream with the `openai` package")
        headers = {}
        if user is not None:
            headers["x-octopus-user"] = user
        if conversation_id is not None:
            headers["x-octopus-conversation"] = conversation_id
        response = self._send("POST", "/v1/chat/completions", json_body=dict(body), headers=headers)
        return response.json()

