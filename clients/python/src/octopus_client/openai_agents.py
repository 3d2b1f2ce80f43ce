"""Octopus in the OpenAI Agents SDK: a ``Session`` whose items are the
messages of an Octopus conversation, so that a ``Runner`` remembers across
runs and processes, and Octopus embeds, summarises and learns facts from
what was said; and an input filter that gives the model what Octopus holds
for the user's message (facts, knowledge, past conversations).

Install with ``pip install octopus-client[openai-agents]``. A thin layer
over :class:`octopus_client.AsyncOctopus`: user and assistant messages,
function calls and their outputs are kept (as Octopus messages and tool-call
records); items Octopus has no place for (reasoning, web search calls) are
not stored. A server's error is raised as :class:`OctopusAgentsError`, an
``AgentsException`` that keeps the API's ``code``, ``status`` and ``field``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any, TypeVar

from agents.exceptions import AgentsException
from agents.memory.session import SessionABC
from agents.memory.session_settings import SessionSettings
from agents.run_config import CallModelData, ModelInputData

from . import AsyncOctopus, OctopusError
from ._common import memory_of, plain, text_of

__all__ = ["OctopusAgentsError", "OctopusMemory", "OctopusSession"]

T = TypeVar("T")


class OctopusAgentsError(AgentsException, OctopusError):
    """An error of the Octopus server, raised where the Agents SDK called it."""


async def _raising(call: Awaitable[T]) -> T:
    try:
        return await call
    except OctopusError as error:
        raise OctopusAgentsError(error.status, error.code, error.message, error.field, error.body) from error


class OctopusSession(SessionABC):
    """The items of one Octopus conversation, oldest first, every episode.

    Give ``conversation_id`` to continue a conversation, or ``agent_id`` and
    ``user_id`` to start one on the first ``add_items``. ``pop_item`` erases
    the newest message from every store; ``clear_session`` deletes the
    conversation and starts a new one with the same agent and user.
    """

    def __init__(
        self,
        client: AsyncOctopus,
        *,
        conversation_id: str | None = None,
        agent_id: str | None = None,
        user_id: str | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        if conversation_id is None and (agent_id is None or user_id is None):
            raise ValueError("give conversation_id, or agent_id and user_id")
        self.client = client
        self.conversation_id = conversation_id
        self.agent_id = agent_id
        self.user_id = user_id
        self.session_id = conversation_id or f"{agent_id}/{user_id}"
        self.session_settings = session_settings

    async def _messages(self) -> list[Any]:
        if self.conversation_id is None:
            return []
        episodes = await _raising(self.client.list_episodes(conversation_id=self.conversation_id, limit=1000))
        messages: list[Any] = []
        for episode in sorted(episodes, key=lambda e: e.started_at):
            messages.extend((await _raising(self.client.get_episode(episode.id))).messages)
        return messages

    async def get_items(self, limit: int | None = None) -> list[Any]:
        items = [item for message in await self._messages() for item in _to_items(message)]
        limit = limit if limit is not None else (self.session_settings.limit if self.session_settings else None)
        return items if limit is None else items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[Any]) -> None:
        messages = [message for item in items for message in _to_messages(item)]
        if messages:
            await _raising(self.client.append_messages(await self.started(), {"messages": messages}))

    async def started(self) -> str:
        """The conversation's id, started for the agent and user if it was not yet."""
        if self.conversation_id is None:
            spec = {"agent_id": self.agent_id, "user_id": self.user_id}
            self.conversation_id = str((await _raising(self.client.create_conversation(spec))).id)
        return self.conversation_id

    async def pop_item(self) -> Any | None:
        messages = await self._messages()
        if not messages:
            return None
        newest = messages[-1]
        await _raising(self.client.erase_message(newest.id, reason="popped from an agents session"))
        items = _to_items(newest)
        return items[-1] if items else None

    async def clear_session(self) -> None:
        if self.conversation_id is None:
            return
        conversation = await _raising(self.client.get_conversation(self.conversation_id))
        await _raising(self.client.delete_conversation(self.conversation_id))
        self.agent_id, self.user_id = str(conversation.agent_id), conversation.user_id
        self.conversation_id = None


class OctopusMemory:
    """A ``RunConfig(call_model_input_filter=...)`` that adds what Octopus
    holds for the newest user message (the user's facts, the agent's
    knowledge and procedures, past conversations) to the agent's
    instructions before each model call, as Octopus assembles it for the
    session's conversation within the agent's token budget."""

    def __init__(self, session: OctopusSession) -> None:
        self.session = session

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        given = data.model_data
        asked = next((text_of(i.get("content")) for i in reversed(given.input) if _is_user(i)), "")
        if not asked:
            return given
        conversation = await self.session.started()
        context = await _raising(self.session.client.build_context(conversation, {"message": asked}))
        memory = "\n\n".join(memory_of(context))
        if not memory:
            return given
        instructions = f"{given.instructions}\n\n{memory}" if given.instructions else memory
        return ModelInputData(input=given.input, instructions=instructions)


def _is_user(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type", "message") == "message" and item.get("role") == "user"


def _to_messages(item: Any) -> list[dict[str, Any]]:
    """An SDK item as Octopus messages (none for what Octopus cannot hold)."""
    item = item if isinstance(item, dict) else item.model_dump(exclude_none=True)
    kind = item.get("type", "message")
    if kind == "message" and item.get("role") in ("user", "assistant", "system", "developer"):
        role = "system" if item["role"] == "developer" else item["role"]
        return [{"role": role, "content": text_of(item.get("content"))}]
    if kind == "function_call":
        call = {"id": item["call_id"], "type": "function",
                "function": {"name": item["name"], "arguments": item.get("arguments") or "{}"}}
        return [{"role": "assistant", "content": None, "tool_calls": [call]}]
    if kind == "function_call_output":
        output = item.get("output")
        return [{"role": "tool", "tool_call_id": item["call_id"],
                 "content": output if isinstance(output, str) else text_of(output)}]
    return []


def _to_items(message: Any) -> list[dict[str, Any]]:
    """An Octopus message as SDK input items."""
    role = plain(message.role)
    text = text_of(message.content)
    if role == "tool":
        return [{"type": "function_call_output", "call_id": message.tool_call_id or "", "output": text}]
    items: list[dict[str, Any]] = []
    if text or not message.tool_calls:
        items.append({"role": role, "content": text})
    for call in message.tool_calls:
        arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments or {})
        items.append({"type": "function_call", "call_id": call.tool_call_id,
                      "name": call.function_name, "arguments": arguments})
    return items
