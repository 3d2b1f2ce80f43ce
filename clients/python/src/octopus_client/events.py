"""The events of a streamed turn."""

from __future__ import annotations

from dataclasses import dataclass

from . import models


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply's text, as the model writes it."""

    text: str


@dataclass(frozen=True)
class TurnDone:
    """The turn is over: the whole reply, its tool calls and its memory trace."""

    reply: models.TurnReply


TurnEvent = TextDelta | TurnDone
