// The server the tests run against: `crates/octopus-cli/tests/it/our_clients.rs`
// starts it and names it in OCTOPUS_URL and OCTOPUS_ADMIN_KEY, with a loopback
// chat model at OCTOPUS_TEST_CHAT_URL that answers `echo: <the last user message>`,
// and OCTOPUS_TEST_CHAT_EXPORTS, the folder of a ChatGPT and a Claude export to import.

import { randomUUID } from "node:crypto";

import { Octopus } from "octopus-client";

export function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these through the test command (scripts/test.sh)`);
  return value;
}

export const url = () => required("OCTOPUS_URL");
export const admin = () => new Octopus({ baseUrl: url(), apiKey: required("OCTOPUS_ADMIN_KEY") });

/** A client with the key of a new, empty tenant. */
export async function newTenant() {
  const tenant = await admin().createTenant({ name: `ts-${randomUUID().slice(0, 12)}` });
  const { key } = await admin().createApiKey(tenant.id, { name: "tests" });
  return new Octopus({ baseUrl: url(), apiKey: key });
}

export const agentSpec = () => ({
  name: "support",
  system_prompt: "You are Acme's support agent.",
  llm: { provider: "openai", model: "gpt-4o-mini", base_url: required("OCTOPUS_TEST_CHAT_URL") },
});

export function textOf(message) {
  const content = message.content;
  return typeof content === "string" ? content : (content ?? []).map((part) => part.text ?? "").join("");
}

/** What `read` resolves to once `done` holds of it: memory is embedded by a
 * worker after the write is acknowledged. */
export async function eventually(read, done, what, seconds = 60) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still not so after ${seconds} s: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
