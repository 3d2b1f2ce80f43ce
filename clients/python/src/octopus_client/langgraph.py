"""Octopus as LangGraph's long-term memory: a ``BaseStore`` whose items are
the facts an agent holds about its users, so that what a graph remembers is
in Octopus's context for that user, and what Octopus learned is in the
graph's searches.

Install with ``pip install octopus-client[langgraph]``. A thin layer over
:class:`octopus_client.Octopus`:

- A namespace names a user and a category: the user at position
  ``user_at`` (0 by default), the other parts joined by ``/`` as the fact's
  category, which must be one of the agent's ``memory.fact_categories``
  (none for a namespace of the user alone). ``("alice", "food")`` is
  alice's facts filed under ``food``.
- An item's key is the fact's ``key``; a fact Octopus learned itself has
  none and is keyed by its id. ``put`` of a key that holds corrects the
  fact (a new version; the old one is kept in its history), ``delete``
  removes every version from every store.
- A value whose only field is ``text_field`` (``"content"`` by default) is
  the fact's text; any other value is kept as its JSON text, which is what
  Octopus embeds and shows the model.
- ``search`` with a query is by meaning (facts that hold, best first, with
  Octopus's score); without, the newest first. ``filter`` matches fields of
  the value, exactly or with ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``,
  ``$lte``. Octopus keeps every user's memory apart: a search, and
  ``list_namespaces``'s prefix, name the user.

Items never expire (``ttl`` is not supported) and are always embedded
(``index=False`` changes nothing); an item's ``created_at`` and
``updated_at`` are when the version that holds was written (the earlier
ones are in the fact's history). LangGraph has no error type for stores: a
server's error is raised as :class:`octopus_client.OctopusError`, with the
API's ``code``.
"""

from __future__ import annotations

import asyncio
import json
import operator
import uuid
from collections.abc import Iterable
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from . import Octopus, OctopusError, models

__all__ = ["OctopusStore"]

# Facts read per page when a search or a listing walks them all.
_PAGE = 1000
# The most a recall returns, which a search by meaning asks for.
_MOST_RECALLED = 100

_COMPARISONS = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


class OctopusStore(BaseStore):
    """LangGraph's ``BaseStore`` over the facts ``agent_id`` holds about its
    users: pass it to ``StateGraph.compile(store=...)``."""

    supports_ttl = False

    def __init__(self, client: Octopus, agent_id: str, *, user_at: int = 0, text_field: str = "content") -> None:
        self.client = client
        self.agent_id = agent_id
        self.user_at = user_at
        self.text_field = text_field

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # The client is synchronous: its calls wait in a worker thread.
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"not a store operation: {op!r}")

    # Namespaces and values.

    def _place(self, namespace: tuple[str, ...]) -> tuple[str, str | None]:
        """The user and category a namespace names."""
        if len(namespace) <= self.user_at:
            raise ValueError(f"namespace {namespace!r} names no user at position {self.user_at}")
        rest = namespace[: self.user_at] + namespace[self.user_at + 1 :]
        return namespace[self.user_at], "/".join(rest) or None

    def _namespace(self, fact: models.Fact) -> tuple[str, ...]:
        rest = tuple(fact.category.split("/")) if fact.category else ()
        return rest[: self.user_at] + (fact.user_id,) + rest[self.user_at :]

    def _text(self, value: dict[str, Any]) -> str:
        if list(value) == [self.text_field] and isinstance(value[self.text_field], str):
            return value[self.text_field]
        return json.dumps(value, ensure_ascii=False, sort_keys=True)

    def _value(self, text: str) -> dict[str, Any]:
        if text.startswith("{"):
            try:
                value = json.loads(text)
            except ValueError:
                value = None
            if isinstance(value, dict):
                return value
        return {self.text_field: text}

    def _item(self, fact: models.Fact, score: float | None = None, *, searched: bool = False) -> Item:
        fields = {
            "namespace": self._namespace(fact),
            "key": fact.key or str(fact.id),
            "value": self._value(fact.text),
            "created_at": fact.created_at,
            "updated_at": fact.created_at,
        }
        return SearchItem(**fields, score=score) if searched else Item(**fields)

    # Operations.

    def _find(self, namespace: tuple[str, ...], key: str) -> models.Fact | None:
        """The fact that holds under `key` in `namespace`: by its key, or,
        for one Octopus learned, by its id."""
        user, category = self._place(namespace)
        for fact in self.client.list_facts(self.agent_id, user, category=category, key=key):
            if fact.category == category:
                return fact
        if not _is_id(key):
            return None
        try:
            fact = self.client.get_fact(key)
        except OctopusError as error:
            if error.status == 404:
                return None
            raise
        mine = (str(fact.agent_id), fact.user_id, fact.category) == (self.agent_id, user, category)
        return fact if mine and fact.superseded_by is None and fact.key is None else None

    def _get(self, op: GetOp) -> Item | None:
        fact = self._find(op.namespace, op.key)
        return None if fact is None else self._item(fact)

    def _put(self, op: PutOp) -> None:
        found = self._find(op.namespace, op.key)
        if op.value is None:
            if found is not None:
                self.client.delete_fact(found.id, reason="deleted from a LangGraph store")
            return
        text = self._text(dict(op.value))
        if found is None:
            user, category = self._place(op.namespace)
            spec: dict[str, Any] = {"text": text, "key": op.key}
            if category is not None:
                spec["category"] = category
            try:
                self.client.add_fact(self.agent_id, user, spec)
                return
            except OctopusError as error:
                # Another writer added the key first: correct theirs.
                if error.code != "fact_key_taken":
                    raise
            found = self._find(op.namespace, op.key)
            if found is None:
                raise RuntimeError(f"the key {op.key!r} was taken and is gone again")
        if found.text != text:
            self.client.correct_fact(found.id, {"text": text, "reason": "put in a LangGraph store"})

    def _search(self, op: SearchOp) -> list[SearchItem]:
        user, _ = self._place(op.namespace_prefix)
        wanted = op.namespace_prefix
        within = [
            (fact, score)
            for fact, score in self._candidates(user, op.query)
            if self._namespace(fact)[: len(wanted)] == wanted
        ]
        items = [self._item(fact, score, searched=True) for fact, score in within]
        items = [item for item in items if _matches(item.value, op.filter or {})]
        return items[op.offset : op.offset + op.limit]  # type: ignore[return-value]

    def _candidates(self, user: str, query: str | None) -> list[tuple[models.Fact, float | None]]:
        """The user's facts that hold: by meaning for a query, else the newest first."""
        if query:
            spec = {"user_id": user, "query": query, "top_k": _MOST_RECALLED,
                    "include_messages": False, "include_summaries": False}
            hits = self.client.recall(self.agent_id, spec)
            return [(hit.fact, hit.score) for hit in hits if hit.fact is not None and hit.fact.superseded_by is None]
        return [(fact, None) for fact in self._every_fact(user)]

    def _every_fact(self, user: str) -> list[models.Fact]:
        facts: list[models.Fact] = []
        while True:
            page = self.client.list_facts(self.agent_id, user, limit=_PAGE, offset=len(facts))
            facts.extend(page)
            if len(page) < _PAGE:
                return facts

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefixes = [c for c in op.match_conditions or () if c.match_type == "prefix"]
        users = {p.path[self.user_at] for p in prefixes if len(p.path) > self.user_at} - {"*"}
        if len(users) != 1:
            raise ValueError(f"list_namespaces needs a prefix that names one user at position {self.user_at}")
        found = {self._namespace(fact) for fact in self._every_fact(users.pop())}
        if op.max_depth is not None:
            found = {namespace[: op.max_depth] for namespace in found}
        kept = sorted(n for n in found if all(_namespace_matches(c, n) for c in op.match_conditions or ()))
        return kept[op.offset : op.offset + op.limit]


def _is_id(key: str) -> bool:
    try:
        uuid.UUID(key)
    except ValueError:
        return False
    return True


def _matches(value: dict[str, Any], wanted: dict[str, Any]) -> bool:
    for field, condition in wanted.items():
        actual = value.get(field)
        tests = condition.items() if isinstance(condition, dict) and condition and all(
            k in _COMPARISONS for k in condition) else [("$eq", condition)]
        for name, expected in tests:
            try:
                if not _COMPARISONS[name](actual, expected):
                    return False
            except TypeError:
                return False
    return True


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(want in ("*", have) for want, have in zip(path, part))
