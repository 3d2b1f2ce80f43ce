"""What both clients share: paths, bodies, errors and the events of a stream."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import quote
from uuid import UUID

import httpx
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from . import models
from .errors import OctopusError
from .events import TextDelta, TurnDone, TurnEvent

Model = TypeVar("Model", bound=BaseModel)
Body = BaseModel | Mapping[str, Any]
# An id as the models hold it, or as text.
Id = UUID | str

DEFAULT_URL = "http://127.0.0.1:7700"


def plain(value: object) -> object:
    """Ids, times and models as JSON holds them."""
    return to_jsonable_python(value)


def segment(value: object) -> str:
    """One path segment: ids, user ids and names may hold any character."""
    return quote(str(plain(value)), safe="")


def text_of(content: Any) -> str:
    """A message's text: its string, or its text parts joined (OpenAI-shaped
    parts, as models or as dicts); empty for none."""
    if content is None or isinstance(content, str):
        return content or ""
    texts = (part.get("text") if isinstance(part, dict) else getattr(part, "text", None) for part in content)
    return "".join(text for text in texts if text)


# The blocks of an assembled context that hold memory, each one system
# message between the agent's own prompt and the conversation's history.
_MEMORY_BLOCKS = ("procedures", "facts", "knowledge", "episodic")


def memory_of(context: Any) -> list[str]:
    """The memory of an assembled context (procedures, facts, knowledge,
    past conversations), one text per block, without the agent's system
    prompt, the history or the message: what an integration adds to a
    framework's own prompt."""
    kept = {plain(block.block): block.items for block in context.trace.blocks}
    start = 1 if kept.get("system_prompt") else 0
    count = sum(1 for name in _MEMORY_BLOCKS if kept.get(name))
    return [text_of(message.content) for message in context.messages[start : start + count]]


def payload_of(body: Body) -> Any:
    """A request body as JSON: a model with only the fields that were set
    (so that the server's defaults apply), or a mapping as given."""
    if isinstance(body, BaseModel):
        return body.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return plain(dict(body))


def query_of(**params: Any) -> dict[str, Any]:
    """Query parameters without the ones left out; booleans as the server reads them."""
    query: dict[str, Any] = {}
    for name, value in params.items():
        if value is None:
            continue
        query[name.rstrip("_")] = ("true" if value else "false") if isinstance(value, bool) else str(plain(value))
    return query


def error_of(response: httpx.Response) -> OctopusError:
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    return OctopusError.from_body(response.status_code, body, response.text[:500])


class EventStream:
    """Server-sent events of a turn, read line by line."""

    def __init__(self) -> None:
        self._name = "message"
        self._data: list[str] = []

    def feed(self, line: str) -> TurnEvent | None:
        """The event a line completes, if any; an `error` event is raised."""
        if line.startswith(":"):
            return None
        if line:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                self._name = value
            elif field == "data":
                self._data.append(value)
            return None
        name, data = self._name, "\n".join(self._data)
        self._name, self._data = "message", []
        return turn_event(name, data) if data else None


def turn_event(name: str, data: str) -> TurnEvent | None:
    """One server-sent event of a turn; an `error` event is raised."""
    payload = json.loads(data)
    if name == "delta":
        return TextDelta(payload["text"])
    if name == "done":
        return TurnDone(models.TurnReply.model_validate(payload))
    if name == "error":
        raise OctopusError.from_body(int(payload.get("status", 0)), payload, data[:500])
    return None
