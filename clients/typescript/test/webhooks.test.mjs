// Webhooks through the client: an endpoint registered here receives a
// change, signed as the Standard Webhooks specification says, and its log
// and state are read back. (The test command's server lets endpoints on
// loopback be registered.)

import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import { test } from "node:test";

import { OctopusError } from "octopus-client";

import { agentSpec, eventually, newTenant } from "./helpers.mjs";

/** A loopback endpoint that records each delivery and answers 204. */
async function endpoint() {
  const received = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      received.push({ headers: request.headers, body });
      response.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/octopus`, received, server };
}

test("an endpoint receives a signed event and its log says delivered", async () => {
  const octopus = await newTenant();
  const hook = await endpoint();
  try {
    const created = await octopus.createWebhook({ url: hook.url, events: ["fact.added"] });
    assert.match(created.secret, /^whsec_/);
    assert.deepEqual((await octopus.listWebhooks()).map((w) => w.id), [created.webhook.id]);
    const agent = await octopus.createAgent(agentSpec());
    const fact = await octopus.addFact(agent.id, "alice", { text: "Alice is allergic to peanuts" });

    const [delivery] = await eventually(() => hook.received, (r) => r.length === 1, "one delivery");
    const event = JSON.parse(delivery.body);
    assert.equal(event.type, "fact.added");
    assert.equal(event.data.fact_id, fact.id);
    const key = Buffer.from(created.secret.slice("whsec_".length), "base64");
    const signed = `${delivery.headers["webhook-id"]}.${delivery.headers["webhook-timestamp"]}.${delivery.body}`;
    const expected = createHmac("sha256", key).update(signed).digest("base64");
    assert.equal(delivery.headers["webhook-signature"], `v1,${expected}`);

    const log = await eventually(
      () => octopus.listDeliveries(created.webhook.id),
      (log) => log.length === 1 && log[0].state === "delivered",
      "the log shows it delivered",
    );
    assert.equal(log[0].message_id, delivery.headers["webhook-id"]);
    assert.equal((await octopus.enableWebhook(created.webhook.id)).enabled, true);
    await octopus.deleteWebhook(created.webhook.id);
    await assert.rejects(octopus.getWebhook(created.webhook.id), (error) => {
      assert.ok(error instanceof OctopusError);
      assert.equal(error.status, 404);
      return true;
    });
  } finally {
    hook.server.close();
  }
});

test("a bad registration is refused naming the field", async () => {
  const octopus = await newTenant();
  await assert.rejects(octopus.createWebhook({ url: "ftp://example.com", events: ["fact.added"] }), (error) => {
    assert.equal(error.status, 422);
    assert.equal(error.field, "url");
    return true;
  });
  assert.deepEqual(await octopus.listWebhooks(), []);
});
