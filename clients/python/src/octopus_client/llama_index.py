"""Octopus in LlamaIndex: a memory block for ``llama_index.core.memory.Memory``
that brings what an agent recalls of a user (facts, past turns, episode
summaries) into the prompt and keeps what leaves the short-term memory, and
a retriever over an agent's knowledge.

Install with ``pip install octopus-client[llama-index]``. Both are thin
layers over the clients. LlamaIndex has no exception type of its own: a
server's error is raised as :class:`octopus_client.OctopusError`, with the
API's ``code``, ``status`` and ``field``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.utils import get_tokenizer
from pydantic import Field

from . import AsyncOctopus, Octopus
from ._common import plain, text_of

__all__ = ["OctopusKnowledgeRetriever", "OctopusMemoryBlock"]

_ROLES = {MessageRole.USER: "user", MessageRole.ASSISTANT: "assistant", MessageRole.SYSTEM: "system"}


class OctopusMemoryBlock(BaseMemoryBlock[str]):
    """What ``agent_id`` recalls of ``user_id`` for the newest user message,
    best first, one line per memory; under the ``Memory``'s token limit the
    lowest-ranked lines go first (give the block a ``priority`` above 0 to
    let it be shortened).

    Messages the ``Memory`` moves out of its short-term history are appended
    to an Octopus conversation (``conversation_id``, or one started for the
    agent and user on the first), so that Octopus embeds them, summarises
    them and learns facts from them. Only user, assistant and system
    messages are kept.
    """

    name: str = "octopus"
    description: str | None = "What Octopus recalls of the user"
    priority: int = 1
    client: AsyncOctopus
    agent_id: str
    user_id: str
    conversation_id: str | None = None
    top_k: int = 8
    tokenizer_fn: Callable[[str], list] = Field(default_factory=get_tokenizer, exclude=True)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        asked = next((m for m in reversed(messages or []) if m.role == MessageRole.USER), None)
        query = asked.content if asked is not None else None
        if not query:
            return ""
        spec = {"user_id": self.user_id, "query": query, "top_k": self.top_k}
        hits = await self.client.recall(self.agent_id, spec)
        return "\n".join(_line(hit) for hit in hits)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        kept = [{"role": _ROLES[m.role], "content": m.content} for m in messages if m.role in _ROLES and m.content]
        if not kept:
            return
        if self.conversation_id is None:
            spec = {"agent_id": self.agent_id, "user_id": self.user_id}
            self.conversation_id = str((await self.client.create_conversation(spec)).id)
        await self.client.append_messages(self.conversation_id, {"messages": kept})

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        lines = content.splitlines()
        while lines and tokens_to_truncate > 0:
            tokens_to_truncate -= len(self.tokenizer_fn(lines.pop() + "\n"))
        return "\n".join(lines) or None


def _line(hit: Any) -> str:
    """One recalled memory as a line: what it is, when (for a fact, the
    period it held, so that a replaced one reads as such), and its words."""
    day = hit.at.date().isoformat()
    if hit.fact is not None:
        fact = hit.fact
        since = fact.valid_from.date().isoformat()
        held = f"held {since} to {fact.valid_to.date().isoformat()}" if fact.valid_to else f"since {since}"
        return f"- (fact, {held}) {fact.text}"
    if hit.window is not None:
        message = hit.window.message
        return f"- ({plain(message.role)} said, {day}) {text_of(message.content)}"
    return f"- (conversation of {day}) {hit.summary or ''}"


class OctopusKnowledgeRetriever(BaseRetriever):
    """Nodes for a query from ``agent_id``'s knowledge: each chunk's text,
    its id, its document's ``source`` in the metadata, and its score."""

    def __init__(self, client: Octopus, agent_id: str, *, top_k: int = 5, min_score: float | None = None) -> None:
        super().__init__()
        self._client = client
        self._agent_id = agent_id
        self._top_k = top_k
        self._min_score = min_score

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        spec: dict[str, Any] = {"query": query_bundle.query_str, "top_k": self._top_k}
        if self._min_score is not None:
            spec["min_score"] = self._min_score
        hits = self._client.search_knowledge(self._agent_id, spec)
        return [
            NodeWithScore(
                node=TextNode(id_=str(hit.chunk.id), text=hit.chunk.content, metadata={"source": hit.chunk.source}),
                score=hit.score,
            )
            for hit in hits
        ]
