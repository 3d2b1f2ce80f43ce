"""The web console in Debian's chromium, driven by selenium: sign in with the
keyboard, walk every page, change an agent, approve a procedure and roll it
back, run a context, erase a message, correct, delete and add a fact, export,
forget a user, register a webhook and read its deliveries (an endpoint that
answered 410 Gone disabled, then enabled again); then another tenant's key, which
sees none of it; then the admin key, with the tenants and the metrics; and
every page again at a phone's width. A screenshot of each page goes to
OCTOPUS_TEST_ARTIFACTS.

The server is the test's (OCTOPUS_URL, OCTOPUS_ADMIN_KEY), its chat model the
loopback fake at OCTOPUS_TEST_CHAT_URL.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import httpx
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

URL = os.environ["OCTOPUS_URL"]
ADMIN_KEY = os.environ["OCTOPUS_ADMIN_KEY"]
CHAT_URL = os.environ["OCTOPUS_TEST_CHAT_URL"]
ARTIFACTS = Path(os.environ["OCTOPUS_TEST_ARTIFACTS"])

http = httpx.Client(base_url=URL, timeout=30)


def api(key: str, method: str, path: str, body=None, **params):
    response = http.request(method, path, json=body, params=params, headers={"authorization": f"Bearer {key}"})
    assert response.is_success, f"{method} {path}: {response.status_code} {response.text}"
    return response.json() if response.content else None


def tenant(name: str) -> str:
    created = api(ADMIN_KEY, "POST", "/v1/tenants", {"name": name})
    return api(ADMIN_KEY, "POST", f"/v1/tenants/{created['id']}/keys", {"name": "seed"})["key"]


def seed() -> dict:
    key = tenant("acme")
    agent = api(key, "POST", "/v1/agents", {
        "name": "support",
        "system_prompt": "You are Acme's support agent.",
        "llm": {"provider": "openai", "model": "gpt-4o-mini", "base_url": CHAT_URL},
        # A small budget, so that the context playground has something to leave out.
        "memory": {"max_working_memory_tokens": 256, "summarize_on_close": False},
    })
    conversation = api(key, "POST", "/v1/conversations", {"agent_id": agent["id"], "user_id": "alice"})
    api(key, "POST", f"/v1/conversations/{conversation['id']}/messages", {"messages": [
        {"role": "user", "content": "Where is my order 4417? It was due on Monday."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "order_status", "arguments": "{\"order\": \"4417\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "shipped; arrives Friday"},
        {"role": "assistant", "content": "Your order 4417 shipped and arrives on Friday."},
    ]})
    first = api(key, "GET", "/v1/episodes", conversation_id=conversation["id"])["items"][0]
    api(key, "POST", f"/v1/episodes/{first['id']}/close", {
        "end_reason": "user_closed",
        "summary": "Alice asked about order 4417; it ships Friday.",
        "key_facts": ["Alice's order is 4417", "Alice prefers email"],
    })
    history = [
        {"role": role, "content": f"{role} says line {i} about the parcel, the refund policy and the weather in Porto."}
        for i in range(10) for role in ("user", "assistant")
    ]
    api(key, "POST", f"/v1/conversations/{conversation['id']}/messages", {"messages": history})
    api(key, "POST", f"/v1/agents/{agent['id']}/knowledge/documents", {
        "source": "refunds.md", "category": "policy",
        "text": "# Refunds\n\nRefunds are paid within five working days of the return.",
    })
    api(key, "POST", f"/v1/agents/{agent['id']}/knowledge/documents", {
        "source": "shipping.md", "text": "Parcels ship from Porto every Monday.",
    })
    # A fact the model learned about alice, brought in the way one travels:
    # a dump holding it alone, imported with the admin key into its tenant.
    seed_fact(key, first, "Alice prefers email over phone calls")
    procedure = api(key, "POST", "/v1/procedures", {
        "agent_id": agent["id"], "name": "refund", "trigger_pattern": "(?i)refund",
        "steps": [{"instruction": "Ask for the order number"}, {"instruction": "Check the return arrived"}],
    })
    other_key = tenant("globex")
    api(other_key, "POST", "/v1/agents", {
        "name": "sales", "system_prompt": "You sell.",
        "llm": {"provider": "openai", "model": "gpt-4o-mini", "base_url": CHAT_URL},
    })
    return {"key": key, "agent": agent, "conversation": conversation, "episode": first,
            "procedure": procedure, "other_key": other_key}


def seed_fact(key: str, episode: dict, text: str) -> None:
    import json
    import uuid

    dump = http.get("/v1/export", headers={"authorization": f"Bearer {key}"}).text
    tenant = json.loads(dump.splitlines()[0])["tenant_id"]
    at = episode["started_at"]
    lines = [
        {"type": "header", "format": "octopus-dump", "version": 1, "exported_at": at,
         "tenant_id": tenant, "user_id": None},
        {"type": "fact", "id": str(uuid.uuid4()), "tenant_id": tenant, "agent_id": episode["agent_id"],
         "user_id": episode["user_id"], "episode_id": episode["id"], "message_ids": [], "text": text,
         "valid_from": at, "valid_to": None, "superseded_by": None, "created_at": at},
        {"type": "end", "records": 2},
    ]
    response = http.post("/v1/import", content="\n".join(json.dumps(line) for line in lines),
                         headers={"authorization": f"Bearer {ADMIN_KEY}", "content-type": "application/x-ndjson"})
    assert response.is_success, response.text


def browser() -> webdriver.Chrome:
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


class Console:
    def __init__(self, driver: webdriver.Chrome) -> None:
        self.driver = driver
        # A page drawn again while waited on leaves stale elements: look again.
        self.wait = WebDriverWait(driver, 20, ignored_exceptions=(StaleElementReferenceException,))
        self.shots = 0

    def go(self, route: str, heading: str) -> None:
        url = f"{URL}/console{route}"
        same = self.driver.current_url == url
        self.driver.get(url)
        if same:
            # The same address is no navigation: the page is read again.
            self.driver.refresh()
        self.heading(heading)

    def heading(self, text: str) -> None:
        self.wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), text))

    def find(self, css: str):
        return self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, css)))

    def text(self, css: str) -> str:
        return self.find(css).text

    def click(self, css: str) -> None:
        self.wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, css))).click()

    def click_text(self, text: str) -> None:
        self.wait.until(EC.element_to_be_clickable((By.XPATH, f"//*[self::a or self::button][normalize-space()='{text}']"))).click()

    def screenshot(self, name: str) -> None:
        """The whole page, however long: the window grows to it for the picture."""
        self.shots += 1
        size = self.driver.get_window_size()
        height = self.driver.execute_script("return document.documentElement.scrollHeight")
        self.driver.set_window_size(size["width"], min(max(height + 140, size["height"]), 4000))
        self.driver.save_screenshot(str(ARTIFACTS / f"{self.shots:02d}-{name}.png"))
        self.driver.set_window_size(size["width"], size["height"])

    def tab_to(self, text: str) -> None:
        """Presses Tab until the focused element reads `text` (the keyboard alone)."""
        for _ in range(60):
            self.driver.switch_to.active_element.send_keys(Keys.TAB)
            focused = self.driver.switch_to.active_element
            if focused.text.strip() == text or focused.get_attribute("name") == text:
                return
        raise AssertionError(f"Tab never reached {text!r}")

    def sign_in(self, key: str, heading: str) -> None:
        self.go("#/sign-in", "Sign in")
        self.tab_to("key")
        self.driver.switch_to.active_element.send_keys(key, Keys.ENTER)
        self.heading(heading)

    def sign_out(self) -> None:
        self.click_text("Sign out")
        self.heading("Sign in")

    def fits_a_phone(self, page: str) -> None:
        overflow = self.driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 1, f"{page} scrolls sideways at a phone's width by {overflow}px"


def walk_as_the_tenant(console: Console, world: dict) -> None:
    agent, key = world["agent"], world["key"]
    console.sign_in(key, "Agents")
    console.screenshot("agents")
    assert [a.text for a in console.driver.find_elements(By.CSS_SELECTOR, "main td a")] == ["support"]

    # The keyboard alone reaches an agent and its settings.
    console.tab_to("support")
    console.driver.switch_to.active_element.send_keys(Keys.ENTER)
    console.heading("Agent support")
    prompt = console.find("textarea[name=system_prompt]")
    assert prompt.get_attribute("value") == "You are Acme's support agent."
    assert '"max_working_memory_tokens": 256' in console.find("textarea[name=memory]").get_attribute("value")
    prompt.send_keys(" Be brief.")
    console.click("#agent-settings button[type=submit]")
    console.wait.until(lambda _: api(key, "GET", f"/v1/agents/{agent['id']}")["system_prompt"].endswith("Be brief."))
    console.screenshot("agent-settings")

    console.click_text("Users")
    console.heading("Users of support")
    rows = [r.text for r in console.driver.find_elements(By.CSS_SELECTOR, "main tbody tr")]
    assert len(rows) == 1 and rows[0].startswith("alice 1"), rows
    console.screenshot("users")
    console.click_text("alice")
    console.heading("alice, with support")
    console.screenshot("user")
    # Named by the user's first words, beside when it began.
    named = console.find("#conversations td a")
    assert named.text == "“Where is my order 4417? It was due on Monday.”", named.text
    named.click()
    console.heading("“Where is my order 4417? It was due on Monday.”")
    assert console.text("main h1 + p").startswith("With alice, since "), console.text("main h1 + p")
    episodes = console.driver.find_elements(By.CSS_SELECTOR, "main tbody tr")
    assert len(episodes) == 2, [e.text for e in episodes]
    console.screenshot("conversation")

    console.go(f"#/episodes/{world['episode']['id']}", "Episode of")
    assert "Alice asked about order 4417; it ships Friday." in console.text("#summary")
    facts = [li.text for li in console.driver.find_elements(By.CSS_SELECTOR, "#key-facts li")]
    assert facts == ["Alice's order is 4417", "Alice prefers email"], facts
    messages = console.text("#messages")
    assert "calls order_status (call_1)" in messages and '"order": "4417"' in messages, messages
    assert "answers tool call call_1" in messages and "shipped; arrives Friday" in messages
    console.screenshot("episode")
    # The first message erased: gone from the page and the store, and the
    # summary that may hold its words with it.
    console.click("#messages .message.user .message-erase")
    console.click("#messages .message.user .message-erase-confirm")
    console.wait.until(lambda _: "Where is my order" not in console.text("#messages"))
    assert console.text("#messages h2") == "Messages (3)"
    assert "Alice asked about order 4417" not in console.text("#summary")
    left = api(key, "GET", f"/v1/episodes/{world['episode']['id']}")["messages"]
    assert [m["role"] for m in left] == ["assistant", "tool", "assistant"], left

    console.go(f"#/agents/{agent['id']}/knowledge", "Knowledge of support")
    assert "refunds.md" in console.text("#documents") and "shipping.md" in console.text("#documents")
    for mode in ("vector", "keyword", "hybrid"):
        search = console.find("#knowledge-search input[name=query]")
        search.clear()
        search.send_keys("refunds paid")
        Select(console.find("#knowledge-search select[name=mode]")).select_by_value(mode)
        console.click("#knowledge-search button[type=submit]")
        console.wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hits tbody tr"))
        first = [td.text for td in console.driver.find_elements(By.CSS_SELECTOR, "#hits tbody tr:first-child td")]
        assert first[0] == "refunds.md", (mode, first)
        scores = {"vector": first[3], "keyword": first[4]}
        if mode == "hybrid":
            assert all(s != "—" for s in scores.values()), first
        else:
            assert scores[mode] != "—", (mode, first)
        console.screenshot(f"knowledge-{mode}")
        console.wait.until(lambda d: d.execute_script("document.querySelector('#hits').replaceChildren(); return true"))

    procedure = world["procedure"]
    console.go("#/procedures", "Procedures")
    assert "refund" in console.text("#pending") and "v1 waits" in console.text("#pending")
    console.screenshot("procedures")
    console.find("#pending td a").click()
    console.heading("Procedure refund")
    console.click("#approve")
    console.wait.until(EC.text_to_be_present_in_element((By.ID, "serving"), "Serving v1."))
    assert api(key, "GET", f"/v1/procedures/{procedure['id']}")["serving_version"] == 1
    api(key, "PATCH", f"/v1/procedures/{procedure['id']}", {"steps": [
        {"instruction": "Ask for the receipt"}, {"instruction": "Check the return arrived"}]})
    console.go(f"#/procedures/{procedure['id']}", "Procedure refund")
    diff = console.text("#diff")
    assert "- 1. Ask for the order number" in diff and "+ 1. Ask for the receipt" in diff, diff
    assert "  2. Check the return arrived" in diff, diff
    console.screenshot("procedure-diff")
    console.click("#approve")
    console.wait.until(EC.text_to_be_present_in_element((By.ID, "serving"), "Serving v2."))
    console.click_text("Roll back to v1")
    console.wait.until(EC.text_to_be_present_in_element((By.ID, "serving"), "Serving v1."))
    served = api(key, "GET", f"/v1/procedures/{procedure['id']}")
    assert served["serving_version"] == 1 and served["steps"][0]["instruction"] == "Ask for the order number"

    console.go(f"#/agents/{agent['id']}/context", "Context playground")
    console.find("#context-form textarea[name=message]").send_keys("Can I get a refund for the parcel?")
    console.click("#context-form button[type=submit]")
    bar = console.find("#context-result .bar")
    blocks = bar.find_elements(By.CSS_SELECTOR, ".block")
    named = {b.get_attribute("data-block"): (int(b.get_attribute("data-tokens")), b.rect["width"]) for b in blocks}
    assert {"system_prompt", "history", "user_message"} <= set(named), named
    # Blocks are drawn to scale: width per token is the same for each.
    per_token = [width / tokens for tokens, width in named.values() if tokens >= 20]
    assert max(per_token) - min(per_token) < 0.2 * max(per_token), named
    pruned = console.text("#pruned")
    assert "history" in pruned and "oldest history" in pruned, pruned
    # One row per block and reason, however many items each left out.
    rows = [[cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td")]
            for row in console.find("#pruned").find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert len({(row[0], row[3]) for row in rows}) == len(rows), rows
    assert any(row[1].endswith("messages of the history") for row in rows), rows
    heading = console.text("#context-result h2")
    used, budget = int(heading.split()[0]), int(heading.split()[2])
    assert used <= budget == 256, heading
    console.screenshot("context")
    # Asked why: a row per candidate, each with what became of it.
    console.click("#context-form input[name=explain]")
    console.click("#context-form button[type=submit]")
    why = [[cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td")]
           for row in console.find("#why").find_elements(By.CSS_SELECTOR, "tbody tr")]
    chosen = console.find("#context-form select[name=conversation]").get_attribute("value")
    built = api(key, "POST", f"/v1/conversations/{chosen}/context",
                {"message": "Can I get a refund for the parcel?", "explain": True})
    assert len(why) == len(built["explanation"]["candidates"]) > 0, why
    assert all(row[2].startswith(("kept", "left out")) for row in why), why

    console.go("#/export", "Export")
    console.click("#export-form button[type=submit]")
    result = console.find("#download")
    assert result.get_attribute("href").startswith("blob:")
    records = int(console.text("#export-result").split()[0])
    dump = http.get("/v1/export", headers={"authorization": f"Bearer {key}"}).text
    assert records == len([line for line in dump.splitlines() if line]), records
    console.screenshot("export")

    # With a paragraph about her written by the agent's model (the loopback
    # one echoes what it is asked: her facts), the page shows it.
    api(key, "PATCH", f"/v1/agents/{agent['id']}", {"memory": {"profile_summary": True}})
    profile_path = f"/v1/agents/{agent['id']}/users/alice/profile"
    deadline = time.monotonic() + 30
    while not (written := api(key, "GET", profile_path).get("summary")):
        assert time.monotonic() < deadline, "no paragraph written"
        time.sleep(0.1)
    assert "Alice prefers email over phone calls" in written["text"], written
    # A fact corrected, its history read, then deleted, from alice's page.
    console.go(f"#/agents/{agent['id']}/users/alice", "alice, with support")
    assert console.text("#profile-summary") == " ".join(written["text"].split()), console.text("#profile-summary")
    assert console.text("#facts .fact-text") == "Alice prefers email over phone calls"
    # The profile's counts are the conversations the page lists below.
    listed = len(console.find("#conversations").find_elements(By.CSS_SELECTOR, "tbody tr"))
    assert console.text("#activity").startswith(f"{listed} conversations, "), console.text("#activity")
    console.click("#facts .fact-correct")
    corrected = console.find("#facts .fact-edit input[name=text]")
    corrected.clear()
    corrected.send_keys("Alice prefers text messages")
    console.find("#facts .fact-edit input[name=reason]").send_keys("she said so on the phone")
    console.click("#facts .fact-edit button[type=submit]")
    console.wait.until(lambda _: console.text("#facts .fact-text") == "Alice prefers text messages")
    console.click("#facts .fact-history")
    console.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#facts .fact-details tbody tr")))
    rows = [[cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td")]
            for row in console.find("#facts .fact-details").find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert [(row[1], row[2], row[3]) for row in rows] == [
        ("imported", "Alice prefers email over phone calls", "model"),
        ("corrected", "Alice prefers text messages", "seed"),
    ], rows
    console.screenshot("fact-history")
    console.click("#facts .fact-delete")
    console.click("#facts .fact-delete-confirm")
    console.wait.until(lambda _: not console.driver.find_elements(By.CSS_SELECTOR, "#facts .fact-text"))
    assert api(key, "GET", f"/v1/agents/{agent['id']}/users/alice/facts", include_replaced="true")["items"] == []
    # A fact a person adds by hand.
    console.find("#fact-add input[name=text]").send_keys("Alice prefers morning calls")
    console.find("#fact-add input[name=reason]").send_keys("she said so")
    console.click("#fact-add button[type=submit]")
    console.wait.until(lambda _: console.text("#facts .fact-text") == "Alice prefers morning calls")
    [added] = api(key, "GET", f"/v1/agents/{agent['id']}/users/alice/facts")["items"]
    assert (added["source"], added["episode_id"], added["changed_by"]) == ("manual", None, "seed"), added

    console.click("#forget-start")
    console.screenshot("forget-confirm")
    console.click("#forget-confirm")
    console.wait.until(EC.presence_of_element_located((By.ID, "receipt")))
    receipt = console.text("#receipt")
    # The 3 messages left of the first episode and the 20 of the second.
    assert "relational messages 23" in receipt, receipt
    assert api(key, "GET", f"/v1/agents/{agent['id']}/users")["items"] == []
    console.screenshot("forgotten")
    console.sign_out()


class Endpoint:
    """A loopback webhook endpoint answering `status` to every delivery."""

    def __init__(self) -> None:
        self.status = 410
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                self.rfile.read(int(self.headers["content-length"]))
                self.send_response(endpoint.status)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/octopus"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def walk_the_webhooks(console: Console, world: dict) -> None:
    agent, key = world["agent"], world["key"]
    endpoint = Endpoint()
    console.sign_in(key, "Agents")
    console.click_text("Webhooks")
    console.heading("Webhooks")
    assert "No webhooks yet." in console.text("main")
    console.find("#webhook-form input[name=url]").send_keys(endpoint.url)
    console.find("#webhook-form input[name=description]").send_keys("audit")
    console.click("#webhook-form button[type=submit]")
    assert console.text("#new-secret").startswith("whsec_")
    console.screenshot("webhook-registered")
    webhook = api(key, "GET", "/v1/webhooks")["items"][0]
    world["webhook"] = webhook
    assert len(webhook["events"]) == 7, webhook

    # The endpoint answers 410 Gone: it is disabled, and its page says why.
    api(key, "POST", f"/v1/agents/{agent['id']}/users/alice/facts", {"text": "Alice prefers email"})
    console.wait.until(lambda _: not api(key, "GET", f"/v1/webhooks/{webhook['id']}")["enabled"])
    console.go(f"#/webhooks/{webhook['id']}", "Webhook audit")
    assert "disabled" in console.text("#webhook-state") and "410 Gone" in console.text("#webhook-state")
    assert "failed" in console.text("#deliveries")
    console.screenshot("webhook-disabled")
    endpoint.status = 204
    console.click("#enable")
    console.wait.until(EC.text_to_be_present_in_element((By.ID, "webhook-state"), "enabled"))
    api(key, "POST", f"/v1/agents/{agent['id']}/users/alice/facts", {"text": "Alice works nights"})

    def delivered(_) -> bool:
        log = api(key, "GET", f"/v1/webhooks/{webhook['id']}/deliveries")["items"]
        return any(d["state"] == "delivered" for d in log)

    console.wait.until(delivered)
    console.go(f"#/webhooks/{webhook['id']}", "Webhook audit")
    assert "delivered" in console.text("#deliveries")
    console.screenshot("webhook-deliveries")
    console.sign_out()


def another_tenant_sees_nothing(console: Console, world: dict) -> None:
    console.sign_in(world["other_key"], "Agents")
    assert [a.text for a in console.driver.find_elements(By.CSS_SELECTOR, "main td a")] == ["sales"]
    for route, code in [
        (f"#/agents/{world['agent']['id']}", "agent_not_found"),
        (f"#/agents/{world['agent']['id']}/knowledge", "agent_not_found"),
        (f"#/conversations/{world['conversation']['id']}", "conversation_not_found"),
        (f"#/episodes/{world['episode']['id']}", "episode_not_found"),
        (f"#/procedures/{world['procedure']['id']}", "procedure_not_found"),
        (f"#/webhooks/{world['webhook']['id']}", "webhook_not_found"),
    ]:
        console.go(route, "Could not load this page")
        assert console.find("[role=alert]").get_attribute("data-code") == code, route
    console.go("#/procedures", "Procedures")
    assert "refund" not in console.text("main")
    console.screenshot("other-tenant")
    console.sign_out()


def walk_as_the_admin(console: Console) -> None:
    console.sign_in(ADMIN_KEY, "Tenants")
    names = [r.text.split()[0] for r in console.driver.find_elements(By.CSS_SELECTOR, "main tbody tr")]
    assert {"acme", "globex"} <= set(names), names
    console.screenshot("tenants")
    console.click_text("Metrics")
    console.heading("Metrics")
    assert "Memory queue" in console.text("#memory-queue")
    # The seeded documents were embedded, and the searches' queries.
    throughput = {row.text.split()[0]: row.text for row in console.driver.find_elements(By.CSS_SELECTOR, "#throughput tbody tr")}
    assert {"knowledge", "query"} <= set(throughput), throughput
    console.screenshot("metrics")
    console.click_text("Tenants")
    console.heading("Tenants")
    console.click_text("Open acme")
    console.heading("Agents")
    assert [a.text for a in console.driver.find_elements(By.CSS_SELECTOR, "main td a")] == ["support"]
    # Opening the tenant again reuses the key minted for it.
    console.click_text("Tenants")
    console.heading("Tenants")
    console.click_text("Open acme")
    console.heading("Agents")
    acme = next(t for t in api(ADMIN_KEY, "GET", "/v1/tenants")["items"] if t["name"] == "acme")
    minted = [k for k in api(ADMIN_KEY, "GET", f"/v1/tenants/{acme['id']}/keys")["items"] if k["name"] == "console (admin)"]
    assert len(minted) == 1, minted


def every_page_fits_a_phone(console: Console, world: dict) -> None:
    console.driver.set_window_size(390, 844)
    agent = world["agent"]["id"]
    for route, heading in [
        ("#/agents", "Agents"),
        (f"#/agents/{agent}", "Agent support"),
        (f"#/agents/{agent}/knowledge", "Knowledge of support"),
        (f"#/agents/{agent}/context", "Context playground"),
        ("#/procedures", "Procedures"),
        (f"#/procedures/{world['procedure']['id']}", "Procedure refund"),
        ("#/export", "Export"),
        ("#/webhooks", "Webhooks"),
        (f"#/webhooks/{world['webhook']['id']}", "Webhook audit"),
        ("#/tenants", "Tenants"),
        ("#/metrics", "Metrics"),
    ]:
        console.go(route, heading)
        console.fits_a_phone(route)
        console.screenshot("phone-" + heading.lower().replace(" ", "-"))


def main() -> int:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    world = seed()
    driver = browser()
    try:
        console = Console(driver)
        walk_as_the_tenant(console, world)
        walk_the_webhooks(console, world)
        another_tenant_sees_nothing(console, world)
        walk_as_the_admin(console)
        every_page_fits_a_phone(console, world)
        print(f"{console.shots} screenshots in {ARTIFACTS}")
    except Exception:
        driver.save_screenshot(str(ARTIFACTS / "failure.png"))
        print(driver.find_element(By.TAG_NAME, "body").text, file=sys.stderr)
        raise
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
