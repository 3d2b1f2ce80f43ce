"""Signed events: an endpoint registered through the client receives each
change, and the Standard Webhooks library (PyPI ``standardwebhooks``)
verifies its signature with the secret the registration showed once.

The server of the test command lets endpoints on loopback be registered
(``[webhooks] destinations = "any"``); a server left at its default takes
public addresses only.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from octopus_client import Octopus

from conftest import eventually


class Endpoint:
    """A loopback endpoint that records each delivery and answers 204."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                body = self.rfile.read(int(self.headers["content-length"]))
                endpoint.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/octopus"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture()
def endpoint():
    endpoint = Endpoint()
    yield endpoint
    endpoint.close()


def test_a_delivery_verifies_with_the_standard_webhooks_library(
    octopus: Octopus, agent_spec: dict, endpoint: Endpoint
) -> None:
    created = octopus.create_webhook({"url": endpoint.url, "events": ["fact.added", "fact.deleted"]})
    assert created.secret.startswith("whsec_")
    agent = octopus.create_agent(agent_spec)
    fact = octopus.add_fact(agent.id, "alice", {"text": "Alice is allergic to peanuts"})
    octopus.delete_fact(fact.id)

    received = eventually(lambda: list(endpoint.received), lambda r: len(r) == 2, "two deliveries")
    verifier = Webhook(created.secret)
    events = [verifier.verify(body, headers) for headers, body in received]
    assert [event["type"] for event in events] == ["fact.added", "fact.deleted"]
    assert events[0]["data"]["fact_id"] == str(fact.id)
    assert events[1]["data"]["user_id"] == "alice"
    assert all(b"peanuts" not in body for _, body in received), "ids, not words"

    headers, body = received[0]
    with pytest.raises(WebhookVerificationError):
        verifier.verify(body.replace(b"fact.added", b"fact.tamper"), headers)
    with pytest.raises(WebhookVerificationError):
        Webhook("whsec_" + "A" * 44).verify(body, headers)

    log = eventually(
        lambda: octopus.list_deliveries(created.webhook.id),
        lambda log: all(d.state.value == "delivered" for d in log),
        "the log shows both delivered",
    )
    assert [d.last_status for d in log] == [204, 204]
    assert [d.message_id for d in reversed(log)] == [h["webhook-id"] for h, _ in received]
