"""Octopus in LangChain: a chat message history kept in an Octopus
conversation, and a retriever over what an agent recalls of a user or over
its knowledge.

Install with ``pip install octopus-client[langchain]``. Both are thin layers
over :class:`octopus_client.Octopus`; an error of the server is raised as
:class:`OctopusLangChainError`, a LangChain exception that keeps the API's
``code``, ``status`` and ``field``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.exceptions import LangChainException
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from . import Octopus, OctopusError
from ._common import plain, text_of

__all__ = ["OctopusChatMessageHistory", "OctopusLangChainError", "OctopusRetriever"]


class OctopusLangChainError(LangChainException, OctopusError):
    """An error of the Octopus server, raised where LangChain called it."""


def _raising(call: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return call(*args, **kwargs)
    except OctopusError as error:
        raise OctopusLangChainError(error.status, error.code, error.message, error.field, error.body) from error


_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


class OctopusChatMessageHistory(BaseChatMessageHistory):
    """The messages of one Octopus conversation, oldest first, every episode.

    Give ``conversation_id`` to continue a conversation, or ``agent_id`` and
    ``user_id`` to start one on first use. ``clear()`` deletes the
    conversation and starts a new one with the same agent and user (what
    was said is left to Octopus's retention and forget).
    """

    def __init__(
        self,
        client: Octopus,
        *,
        conversation_id: str | None = None,
        agent_id: str | None = None,
        user_id: str | None = None,
    ) -> None:
        if conversation_id is None and (agent_id is None or user_id is None):
            raise ValueError("give conversation_id, or agent_id and user_id")
        self.client = client
        self.conversation_id = conversation_id
        self.agent_id = agent_id
        self.user_id = user_id

    def _conversation(self) -> str:
        if self.conversation_id is None:
            created = _raising(self.client.create_conversation, {"agent_id": self.agent_id, "user_id": self.user_id})
            self.conversation_id = str(created.id)
        return self.conversation_id

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        if self.conversation_id is None:
            return []
        episodes = _raising(self.client.list_episodes, conversation_id=self.conversation_id, limit=1000)
        out: list[BaseMessage] = []
        for episode in sorted(episodes, key=lambda e: e.started_at):
            for message in _raising(self.client.get_episode, episode.id).messages:
                out.append(_to_langchain(message))
        return out

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        batch = [_to_octopus(message) for message in messages]
        if batch:
            _raising(self.client.append_messages, self._conversation(), {"messages": batch})

    def clear(self) -> None:
        if self.conversation_id is None:
            return
        conversation = _raising(self.client.get_conversation, self.conversation_id)
        _raising(self.client.delete_conversation, self.conversation_id)
        self.agent_id, self.user_id = str(conversation.agent_id), conversation.user_id
        self.conversation_id = None


def _to_octopus(message: BaseMessage) -> dict[str, Any]:
    role = _ROLES.get(message.type)
    if role is None:
        raise ValueError(f"a {message.type} message has no Octopus role")
    stored: dict[str, Any] = {"role": role, "content": text_of(message.content)}
    if isinstance(message, ToolMessage):
        stored["tool_call_id"] = message.tool_call_id
    return stored


def _to_langchain(message: Any) -> BaseMessage:
    text = text_of(message.content)
    extra = {"id": str(message.id)}
    role = plain(message.role)
    if role == "user":
        return HumanMessage(content=text, **extra)
    if role == "assistant":
        return AIMessage(content=text, **extra)
    if role == "system":
        return SystemMessage(content=text, **extra)
    return ToolMessage(content=text, tool_call_id=message.tool_call_id or "", **extra)


class OctopusRetriever(BaseRetriever):
    """Documents for a query: what ``agent_id`` recalls of ``user_id`` (past
    messages, episode summaries and facts), or with ``source="knowledge"``
    the agent's own documents. Each ``Document`` carries its ``id`` and its
    ``score`` and ``kind`` in the metadata."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Octopus
    agent_id: str
    user_id: str | None = None
    source: Literal["recall", "knowledge"] = "recall"
    top_k: int = 5

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        if self.source == "knowledge":
            hits = _raising(self.client.search_knowledge, self.agent_id, {"query": query, "top_k": self.top_k})
            return [
                Document(
                    id=str(hit.chunk.id),
                    page_content=hit.chunk.content,
                    metadata={"score": hit.score, "kind": "knowledge", "source": hit.chunk.source},
                )
                for hit in hits
            ]
        if self.user_id is None:
            raise ValueError("recall needs user_id")
        hits = _raising(self.client.recall, self.agent_id, {"user_id": self.user_id, "query": query, "top_k": self.top_k})
        return [_recalled(hit) for hit in hits]


def _recalled(hit: Any) -> Document:
    kind = plain(hit.kind)
    metadata: dict[str, Any] = {"score": hit.score, "kind": kind, "at": hit.at.isoformat()}
    if hit.fact is not None:
        return Document(id=str(hit.fact.id), page_content=hit.fact.text, metadata=metadata)
    if hit.window is not None:
        message = hit.window.message
        metadata["role"] = plain(message.role)
        return Document(id=str(message.id), page_content=text_of(message.content), metadata=metadata)
    return Document(id=str(hit.episode_id), page_content=hit.summary or "", metadata=metadata)
