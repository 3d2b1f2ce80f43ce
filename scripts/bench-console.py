"""What the web console costs: the bytes it adds to the binary, and how long
its pages take to be on screen, from a cold browser, against a server that
holds 100,000 messages (1,000 users of one agent, 100 messages each, in five
episodes of 20).

    bash -c 'source scripts/clients.sh && ensure_clients &&
             "$OCTOPUS_TEST_CLIENTS_VENV/bin/python" scripts/bench-console.py target/release/octopus'

It starts the binary on a data directory of its own, imports the messages
(with `embed_messages` off, so that no background embedding competes with
the browser for the CPU), then loads each page in a new headless chromium
(Debian's) and reads the time from navigation start to the console's
`octopus:rendered` mark. Prints a table.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ADMIN_KEY = "oct_console_bench_admin"
USERS = 1000
SESSIONS = 5
PER_SESSION = 20
RUNS = 10
ASSETS = Path(__file__).resolve().parent.parent / "crates/octopus-server/console"


def start(binary: str, data: Path) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--log", "warn", "--admin-key", ADMIN_KEY, "--data-dir", str(data)],
        stdout=subprocess.PIPE, text=True,
    )
    for line in server.stdout:
        if line.startswith("Octopus listening on "):
            return server, line.removeprefix("Octopus listening on ").strip()
    raise SystemExit("octopus exited before listening")


def seed(url: str) -> dict:
    http = httpx.Client(base_url=url, timeout=600)

    def api(key: str, method: str, path: str, body=None):
        response = http.request(method, path, json=body, headers={"authorization": f"Bearer {key}"})
        response.raise_for_status()
        return response.json()

    tenant = api(ADMIN_KEY, "POST", "/v1/tenants", {"name": "bench"})
    key = api(ADMIN_KEY, "POST", f"/v1/tenants/{tenant['id']}/keys", {"name": "bench"})["key"]
    agent = api(key, "POST", "/v1/agents", {
        "name": "support", "system_prompt": "You help.",
        "llm": {"provider": "openai", "model": "gpt-4o-mini"},
        "memory": {"embed_messages": False, "summarize_on_close": False},
    })
    started = time.monotonic()
    for user in range(USERS):
        sessions = [{"messages": [
            {"role": "user" if i % 2 == 0 else "assistant",
             "content": f"Message {i} of session {s} from user {user}: where is parcel {user * 100 + i}?",
             "timestamp": f"2026-0{s + 1}-10T10:{i:02d}:00Z"}
            for i in range(PER_SESSION)]} for s in range(SESSIONS)]
        imported = api(key, "POST", "/v1/conversations/import", {
            "agent_id": agent["id"], "user_id": f"user-{user:04d}", "sessions": sessions})
    seconds = time.monotonic() - started
    return {"key": key, "agent": agent["id"], "conversation": imported["conversation"]["id"],
            "episode": imported["episodes"][0], "seed_seconds": seconds}


def load(url: str, key: str, route: str) -> float:
    """Milliseconds from navigation start to the page on screen, in a new browser."""
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        # The key is in the tab's session storage, as after signing in.
        driver.get(f"{url}/healthz")
        driver.execute_script(
            "sessionStorage.setItem('octopus-console', JSON.stringify({key: arguments[0], admin: false}))", key)
        driver.get(f"{url}/console{route}")
        WebDriverWait(driver, 60).until(
            lambda d: d.execute_script("return performance.getEntriesByName('octopus:rendered').length > 0"))
        assert not driver.find_elements(By.CSS_SELECTOR, "[role=alert]"), driver.find_element(By.TAG_NAME, "main").text
        return driver.execute_script("return performance.getEntriesByName('octopus:rendered')[0].startTime")
    finally:
        driver.quit()


def main() -> int:
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/octopus"
    embedded = sum(len(p.read_bytes()) for p in ASSETS.iterdir() if p.is_file())
    with tempfile.TemporaryDirectory() as data:
        server, url = start(binary, Path(data))
        try:
            world = seed(url)
            messages = USERS * SESSIONS * PER_SESSION
            print(f"seeded {messages} messages ({USERS} users) in {world['seed_seconds']:.1f} s")
            pages = [
                ("agents", "#/agents"),
                (f"users of the agent ({USERS})", f"#/agents/{world['agent']}/users"),
                ("a conversation (5 episodes)", f"#/conversations/{world['conversation']}"),
                (f"an episode ({PER_SESSION} messages)", f"#/episodes/{world['episode']}"),
            ]
            rows = []
            for name, route in pages:
                times = sorted(load(url, world["key"], route) for _ in range(RUNS))
                rows.append((name, statistics.median(times), times[int(0.9 * (RUNS - 1))], times[-1]))
        finally:
            server.terminate()
            server.wait()
    print(f"\nconsole assets embedded in the binary: {embedded} bytes ({embedded / 1024:.1f} KiB)")
    print(f"\nfirst load, cold browser, {messages} messages on the server, {RUNS} runs per page")
    print(f"| {'page':<28} | {'p50 ms':>7} | {'p90 ms':>7} | {'max ms':>7} |")
    print(f"|{'-' * 30}|{'-' * 9}|{'-' * 9}|{'-' * 9}|")
    for name, p50, p90, worst in rows:
        print(f"| {name:<28} | {p50:7.1f} | {p90:7.1f} | {worst:7.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
