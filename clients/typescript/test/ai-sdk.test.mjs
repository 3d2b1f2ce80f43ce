// The Vercel AI SDK with Octopus: the middleware around the SDK's own mock
// model, whole and streamed. Run with the pinned `ai`.

import assert from "node:assert/strict";
import { test } from "node:test";

import { AISDKError, generateText, simulateReadableStream, streamText, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { OctopusAISDKError, octopusMemory } from "octopus-client/ai-sdk";

import { agentSpec, newTenant, textOf } from "./helpers.mjs";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 3, text: 3, reasoning: undefined },
};
const stop = { unified: "stop", raw: "stop" };

/** The SDK's mock model, answering `reply`; it records every call's prompt. */
function mockModel(reply) {
  return new MockLanguageModelV3({
    doGenerate: async () => ({ content: [{ type: "text", text: reply }], finishReason: stop, usage, warnings: [] }),
    doStream: async () => ({
      stream: simulateReadableStream({
        chunks: [
          { type: "text-start", id: "t" },
          ...reply.split(/(?<= )/).map((delta) => ({ type: "text-delta", id: "t", delta })),
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: stop, usage },
        ],
      }),
    }),
  });
}

/** What the model was given as system text, in one string. */
const systemOf = (call) => call.prompt.filter((m) => m.role === "system").map((m) => m.content).join("\n");

async function storedIn(octopus, conversationId) {
  const episodes = await octopus.listEpisodes({ conversation_id: conversationId });
  const messages = [];
  for (const episode of episodes) messages.push(...(await octopus.getEpisode(episode.id)).messages);
  return messages.map((m) => [m.role, textOf(m)]);
}

test("generateText: Octopus's memory reaches the model and the exchange is kept", async () => {
  const octopus = await newTenant();
  const agent = await octopus.createAgent(agentSpec());
  await octopus.addFact(agent.id, "alice", { text: "Alice is allergic to peanuts" });
  const memory = octopusMemory({ octopus, agentId: agent.id, userId: "alice" });
  const model = mockModel("No satay for you.");

  const { text } = await generateText({
    model: wrapLanguageModel({ model, middleware: memory }),
    system: "Answer briefly.",
    prompt: "Can I have the satay?",
  });
  assert.equal(text, "No satay for you.");

  const [call] = model.doGenerateCalls;
  assert.equal(call.prompt[0].content, "Answer briefly.", "the app's own system prompt comes first");
  assert.match(systemOf(call), /Alice is allergic to peanuts/);
  assert.doesNotMatch(systemOf(call), /Acme's support agent/, "the agent's prompt is the app's to give");
  assert.deepEqual(await storedIn(octopus, memory.conversationId), [
    ["user", "Can I have the satay?"],
    ["assistant", "No satay for you."],
  ]);
});

test("streamText: the streamed reply is kept once the stream ends", async () => {
  const octopus = await newTenant();
  const agent = await octopus.createAgent(agentSpec());
  const conversation = await octopus.createConversation({ agent_id: agent.id, user_id: "bob" });
  await octopus.ingestDocument(agent.id, { source: "hours.md", text: "The shop opens at nine on Saturdays." });
  const memory = octopusMemory({ octopus, conversationId: conversation.id });
  const model = mockModel("It opens at nine.");

  const result = streamText({ model: wrapLanguageModel({ model, middleware: memory }), prompt: "When do you open on Saturday?" });
  let streamed = "";
  for await (const delta of result.textStream) streamed += delta;
  assert.equal(streamed, "It opens at nine.");
  assert.match(systemOf(model.doStreamCalls[0]), /opens at nine on Saturdays/);
  assert.deepEqual(await storedIn(octopus, conversation.id), [
    ["user", "When do you open on Saturday?"],
    ["assistant", "It opens at nine."],
  ]);
});

test("another tenant's key reaches nothing, as an AI SDK error with the API's code", async () => {
  const octopus = await newTenant();
  const agent = await octopus.createAgent(agentSpec());
  const conversation = await octopus.createConversation({ agent_id: agent.id, user_id: "alice" });
  const stranger = await newTenant();
  const model = mockModel("never");
  const wrapped = wrapLanguageModel({ model, middleware: octopusMemory({ octopus: stranger, conversationId: conversation.id }) });

  await assert.rejects(generateText({ model: wrapped, prompt: "hello", maxRetries: 0 }), (error) => {
    assert.ok(AISDKError.isInstance(error) && error instanceof OctopusAISDKError, String(error));
    assert.deepEqual([error.status, error.code], [404, "conversation_not_found"]);
    return true;
  });
  assert.equal(model.doGenerateCalls.length, 0, "the model is not called without its memory");
  assert.deepEqual(await storedIn(octopus, conversation.id), []);
});
