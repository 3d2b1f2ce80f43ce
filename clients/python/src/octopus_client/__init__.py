"""A typed client for Octopus, the memory server for LLM agents.

    from octopus_client import Octopus

    with Octopus("http://127.0.0.1:7700", api_key="...") as octopus:
        agent = octopus.create_agent({"name": "support", "system_prompt": "You help.",
                                      "llm": {"provider": "openai", "model": "gpt-4o-mini"}})

:class:`Octopus` is synchronous and :class:`AsyncOctopus` asynchronous; both
have one method per operation of the API, named by its operation id. The
schemas are in :mod:`octopus_client.models`.
"""

from . import models
from ._async_client import AsyncOctopus
from ._sync_client import Octopus
from .errors import OctopusError
from .events import TextDelta, TurnDone, TurnEvent

__all__ = ["AsyncOctopus", "Octopus", "OctopusError", "TextDelta", "TurnDone", "TurnEvent", "models"]
