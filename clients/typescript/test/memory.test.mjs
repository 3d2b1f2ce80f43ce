// The client against the server: a tenant's memory, end to end.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { Octopus, OctopusError } from "octopus-client";

import { admin, agentSpec, eventually, newTenant, required, textOf, url } from "./helpers.mjs";

test("messages are stored and recalled by meaning", async () => {
  const octopus = await newTenant();
  const agent = await octopus.createAgent(agentSpec());
  const conversation = await octopus.createConversation({ agent_id: agent.id, user_id: "alice" });
  const stored = await octopus.appendMessages(conversation.id, {
    messages: [
      { role: "user", content: "My parcel 4417 never arrived in Lisbon." },
      { role: "assistant", content: "I am sorry; I will look into parcel 4417." },
    ],
  });
  assert.deepEqual(stored.messages.map((m) => m.role), ["user", "assistant"]);

  const users = await octopus.listUsers(agent.id);
  assert.deepEqual(users.map((u) => [u.user_id, u.conversation_count]), [["alice", 1]]);
  const [episode] = await octopus.listEpisodes({ conversation_id: conversation.id });
  const whole = await octopus.getEpisode(episode.id);
  assert.equal(textOf(whole.messages[0]), "My parcel 4417 never arrived in Lisbon.");

  const hits = await octopus.searchMessages({ q: "Lisbon", user_id: "alice" });
  assert.equal(hits.length, 1);
  assert.equal(hits[0].message.conversation_id, conversation.id);

  await eventually(
    () => octopus.recall(agent.id, { user_id: "alice", query: "a delivery that got lost" }),
    (found) => found.some((hit) => hit.window && textOf(hit.window.message).includes("4417")),
    "the lost parcel is recalled by meaning",
  );
  assert.deepEqual(await octopus.recall(agent.id, { user_id: "bob", query: "a delivery that got lost" }), []);
  const explained = await octopus.recall(agent.id, { user_id: "alice", query: "parcel 4417", explain: true });
  const parcel = explained.find((hit) => hit.window && textOf(hit.window.message).includes("4417"));
  assert.ok(parcel.explanation.found_by.some((found) => found.search === "keyword"), JSON.stringify(parcel));
  const sum = parcel.explanation.found_by.reduce((total, found) => total + found.contribution, 0);
  assert.ok(Math.abs(sum - parcel.explanation.fused) < 1e-9);
});

test("a ChatGPT export is imported once, its current branch alone", async () => {
  const octopus = await newTenant();
  const agent = await octopus.createAgent(agentSpec());
  const exported = readFileSync(`${required("OCTOPUS_TEST_CHAT_EXPORTS")}/chatgpt.json`, "utf8");
  const options = { format: "chatgpt", agentId: agent.id, userId: "ana" };
  const first = await octopus.importChats(exported, options);
  assert.deepEqual([first.imported, first.empty, first.messages], [2, 1, 9]);
  const again = await octopus.importChats(exported, options);
  assert.deepEqual([again.imported, again.already_imported, again.messages], [0, 2, 0]);
  const [lisbon] = await octopus.listEpisodes({ conversation_id: first.conversations[0].conversation_id });
  const words = (await octopus.getEpisode(lisbon.id)).messages.map(textOf).join("\n");
  assert.ok(words.includes("Sintra") && !words.includes("Porto"), words);
  await assert.rejects(
    octopus.importChats(exported.slice(0, exported.length / 2), { ...options, userId: "bo" }),
    (error) => error instanceof OctopusError && error.status === 422 && /line/.test(error.message),
  );
  assert.deepEqual(await octopus.listConversations({ user_id: "bo" }), []);
});

test("the context shows what the model would see", async () => {
  const octopus = await newTenant();
  const agent = await octopus.createAgent(agentSpec());
  const conversation = await octopus.createConversation({ agent_id: agent.id, user_id: "alice" });
  await octopus.appendMessages(conversation.id, { role: "user", content: "I prefer email over phone calls." });
  const context = await octopus.buildContext(conversation.id, { message: "How should you contact me?" });
  assert.equal(context.messages[0].role, "system");
  assert.match(String(context.messages[0].content), /You are Acme's support agent\./);
  assert.equal(context.messages.at(-1).content, "How should you contact me?");
  const history = context.trace.blocks.find((b) => b.block === "history");
  assert.equal(history.items, 1);
  const blocks = context.trace.blocks.reduce((sum, b) => sum + b.tokens, 0);
  assert.ok(blocks < context.trace.total_tokens && context.trace.total_tokens <= context.trace.budget);
});

test("a streamed turn yields the reply as it is written", async () => {
  const octopus = await newTenant();
  const agent = await octopus.createAgent(agentSpec());
  const conversation = await octopus.createConversation({ agent_id: agent.id, user_id: "alice" });
  const events = [];
  for await (const event of octopus.streamTurn(conversation.id, { message: "where is my parcel" })) events.push(event);
  const deltas = events.filter((e) => e.type === "delta").map((e) => e.text);
  assert.ok(deltas.length > 1, "the reply came in pieces");
  const done = events.at(-1);
  assert.equal(done.type, "done");
  assert.equal(deltas.join(""), "echo: where is my parcel");
  assert.equal(textOf(done.reply.reply), "echo: where is my parcel");
  const whole = await octopus.takeTurn(conversation.id, { message: "thanks" });
  assert.equal(textOf(whole.reply), "echo: thanks");
  const episode = await octopus.getEpisode(whole.episode_id);
  assert.deepEqual(episode.messages.map(textOf), [
    "where is my parcel", "echo: where is my parcel", "thanks", "echo: thanks",
  ]);
});

test("knowledge is searched in every mode", async () => {
  const octopus = await newTenant();
  const agent = await octopus.createAgent(agentSpec());
  await octopus.ingestDocument(agent.id, {
    source: "refunds.md",
    category: "policy",
    text: "# Refunds\n\nRefunds are paid within five working days of the return.",
  });
  await octopus.ingestDocument(agent.id, { source: "shipping.md", text: "Parcels ship from Porto every Monday." });
  assert.deepEqual((await octopus.listDocuments(agent.id)).map((d) => d.source), ["refunds.md", "shipping.md"]);
  const document = await octopus.readDocument(agent.id, { source: "refunds.md" });
  assert.match(document.chunks.map((c) => c.content).join(""), /five working days/);
  for (const mode of ["vector", "keyword", "hybrid"]) {
    const hits = await octopus.searchKnowledge(agent.id, { query: "refunds paid", mode, top_k: 1 });
    assert.deepEqual(hits.map((h) => h.chunk.source), ["refunds.md"], mode);
    assert.ok(hits[0].score > 0);
  }
  assert.deepEqual(await octopus.searchKnowledge(agent.id, { query: "refunds", category: "faq" }), []);
});

test("a procedure waits for approval and keeps its versions", async () => {
  const octopus = await newTenant();
  const agent = await octopus.createAgent(agentSpec());
  const created = await octopus.createProcedure({
    agent_id: agent.id,
    name: "refund",
    trigger_pattern: "(?i)refund",
    steps: [{ instruction: "Ask for the order number" }],
  });
  assert.equal(created.pending_version, 1);
  assert.deepEqual(await octopus.listProcedures({ approved: true }), []);
  assert.equal((await octopus.approveProcedure(created.id)).serving_version, 1);
  const changed = await octopus.updateProcedure(created.id, { steps: [{ instruction: "Ask for the receipt" }] });
  assert.deepEqual([changed.pending_version, changed.serving_version], [2, 1]);
  assert.equal((await octopus.rejectProcedure(created.id)).pending_version ?? null, null);
  await octopus.updateProcedure(created.id, { steps: [{ instruction: "Ask for the receipt" }] });
  await octopus.approveProcedure(created.id);
  const back = await octopus.rollbackProcedure(created.id, { version: 1 });
  assert.equal(back.steps[0].instruction, "Ask for the order number");
  const versions = await octopus.procedureVersions(created.id);
  assert.deepEqual(
    versions.map((v) => [v.version, v.status]).sort(),
    [[1, "approved"], [2, "rejected"], [3, "approved"]],
  );
});

test("errors carry the API's code and lose nothing", async () => {
  const octopus = await newTenant();
  await assert.rejects(octopus.getAgent(randomUUID()), (error) => {
    assert.ok(error instanceof OctopusError);
    assert.deepEqual([error.status, error.code], [404, "agent_not_found"]);
    return true;
  });
  await assert.rejects(octopus.createAgent({ ...agentSpec(), name: "" }), (error) => {
    assert.deepEqual([error.status, error.code, error.field], [422, "invalid_request", "name"]);
    return true;
  });
  assert.deepEqual(await octopus.listAgents(), []);
  await assert.rejects(new Octopus({ baseUrl: url() }).listAgents(), { code: "unauthenticated" });
});

test("forgetting a user, and moving a dump", async () => {
  const octopus = await newTenant();
  const agent = await octopus.createAgent(agentSpec());
  for (const user of ["alice", "bob"]) {
    const conversation = await octopus.createConversation({ agent_id: agent.id, user_id: user });
    await octopus.appendMessages(conversation.id, { role: "user", content: `I am ${user}.` });
  }
  const dump = await octopus.exportDump();
  assert.match(dump.split("\n")[0], /"octopus-dump"/);
  const receipt = await octopus.forgetUser("alice");
  assert.equal(receipt.relational.messages, 1);
  assert.deepEqual((await octopus.listUsers(agent.id)).map((u) => u.user_id), ["bob"]);

  const tenant = await admin().createTenant({ name: `copy-${randomUUID().slice(0, 8)}` });
  const { key } = await admin().createApiKey(tenant.id, { name: "copy" });
  const copy = new Octopus({ baseUrl: url(), apiKey: key });
  assert.equal((await copy.importDump(dump)).tenant_id, tenant.id);
  const [copied] = await copy.listAgents();
  assert.deepEqual((await copy.listUsers(copied.id)).map((u) => u.user_id), ["alice", "bob"]);

  // The copy deleted by the operator: its messages counted, its key refused.
  const deleted = await admin().deleteTenant(tenant.id);
  assert.deepEqual([deleted.tenant_id, deleted.relational.messages], [tenant.id, 2]);
  await assert.rejects(copy.listAgents(), (error) => error.code === "unauthenticated");
});

test("a fact is corrected and deleted, with its history", async () => {
  const octopus = await newTenant();
  const agent = await octopus.createAgent(agentSpec());
  const conversation = await octopus.createConversation({ agent_id: agent.id, user_id: "dana" });
  await octopus.appendMessages(conversation.id, { role: "user", content: "I live in Lyon." });
  // The dump with a fact about dana, as a fact the model learned travels.
  const lines = (await octopus.exportDump()).split("\n").filter(Boolean).map((line) => JSON.parse(line));
  const episode = lines.find((record) => record.type === "episode");
  const end = lines.pop();
  lines.push({
    type: "fact", id: randomUUID(), tenant_id: lines[0].tenant_id, agent_id: episode.agent_id,
    user_id: "dana", episode_id: episode.id, message_ids: [], text: "Dana lives in Lyon",
    valid_from: episode.started_at, valid_to: null, superseded_by: null, created_at: episode.started_at,
  }, { ...end, records: end.records + 1 });

  const tenant = await admin().createTenant({ name: `facts-${randomUUID().slice(0, 8)}` });
  const { key } = await admin().createApiKey(tenant.id, { name: "support-desk" });
  const desk = new Octopus({ baseUrl: url(), apiKey: key });
  await desk.importDump(lines.map((line) => JSON.stringify(line)).join("\n"));
  const [copied] = await desk.listAgents();
  const [lyon] = await desk.listFacts(copied.id, "dana");
  assert.equal((await desk.getFact(lyon.id)).text, "Dana lives in Lyon");

  const paris = await desk.correctFact(lyon.id, { text: "Dana lives in Paris", reason: "she moved" });
  assert.deepEqual([paris.text, paris.source, paris.changed_by], ["Dana lives in Paris", "manual", "support-desk"]);
  await assert.rejects(desk.correctFact(lyon.id, { text: "Dana lives in Nice" }), (error) =>
    error instanceof OctopusError && error.status === 409 && error.code === "fact_replaced");
  assert.deepEqual(
    (await desk.factHistory(paris.id)).map((e) => [e.action, e.text, e.changed_by]),
    [["imported", "Dana lives in Lyon", "model"], ["corrected", "Dana lives in Paris", "support-desk"]],
  );
  const added = await desk.addFact(copied.id, "dana", { text: "Dana is allergic to peanuts" });
  assert.deepEqual([added.source, added.episode_id], ["manual", null]);
  const profile = await desk.userProfile(copied.id, "dana");
  assert.deepEqual(profile.facts.flatMap((group) => group.facts.map((f) => f.text)),
    ["Dana is allergic to peanuts", "Dana lives in Paris"]);
  assert.equal(profile.activity?.conversations, 1);
  await assert.rejects(desk.userProfile(copied.id, "erin"), (error) =>
    error instanceof OctopusError && error.status === 404 && error.code === "user_not_found");
  await assert.rejects(desk.addFact(copied.id, "dana", { text: " " }), (error) =>
    error instanceof OctopusError && error.status === 422 && error.field === "text");
  assert.equal((await desk.deleteFact(added.id)).versions, 1);
  const receipt = await desk.deleteFact(paris.id, { reason: "asked" });
  assert.equal(receipt.versions, 2);
  assert.deepEqual(await desk.listFacts(copied.id, "dana", { include_replaced: true }), []);
  assert.deepEqual((await desk.factHistory(lyon.id)).map((e) => [e.action, e.text]),
    [["imported", null], ["corrected", null], ["deleted", null]]);
});

test("a message is erased", async () => {
  const octopus = await newTenant();
  const agent = await octopus.createAgent(agentSpec());
  const conversation = await octopus.createConversation({ agent_id: agent.id, user_id: "erin" });
  const { messages } = await octopus.appendMessages(conversation.id, {
    messages: [
      { role: "user", content: "My locker code is 4471." },
      { role: "user", content: "I like tea." },
    ],
  });
  const receipt = await octopus.eraseMessage(messages[0].id, { reason: "she asked" });
  assert.deepEqual([receipt.message_id, receipt.facts_deleted, receipt.compacted], [messages[0].id, 0, true]);
  const episode = await octopus.getEpisode(messages[0].episode_id);
  assert.deepEqual(episode.messages.map(textOf), ["I like tea."]);
  await assert.rejects(octopus.eraseMessage(messages[0].id), (error) =>
    error instanceof OctopusError && error.status === 404 && error.code === "message_not_found");
});
