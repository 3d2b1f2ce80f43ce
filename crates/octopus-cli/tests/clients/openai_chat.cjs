// The official `openai` npm package under Node against Octopus's chat
// completions: the agent as a model, a tool round, a whole answer and a
// streamed one. Run by crates/octopus-cli/tests/it/clients.rs (see
// openai_chat.py for the provider's script). Environment: OCTOPUS_URL,
// OCTOPUS_API_KEY, OCTOPUS_TEST_USER, and OCTOPUS_TEST_NODE_MODULES, where
// the package is installed.
const assert = require("node:assert/strict");
const path = require("node:path");
const { OpenAI } = require(path.join(process.env.OCTOPUS_TEST_NODE_MODULES, "openai"));

const client = new OpenAI({ baseURL: `${process.env.OCTOPUS_URL}/v1`, apiKey: process.env.OCTOPUS_API_KEY });
const user = process.env.OCTOPUS_TEST_USER;

async function main() {
  const models = [];
  for await (const model of client.models.list()) models.push(model.id);
  assert.ok(models.includes("support"), models);

  const tools = [{ type: "function", function: {
    name: "order_status", description: "Look up an order",
    parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"] } } }];
  const question = { role: "user", content: "Where is order 4417?" };
  const asked = await client.chat.completions.create({ model: "support", user, messages: [question], tools });
  const choice = asked.choices[0];
  assert.equal(choice.finish_reason, "tool_calls");
  const call = choice.message.tool_calls[0];
  assert.equal(call.function.name, "order_status");
  assert.deepEqual(JSON.parse(call.function.arguments), { order: "4417" });
  const answered = await client.chat.completions.create({ model: "support", user, tools, messages: [
    question, choice.message, { role: "tool", tool_call_id: call.id, content: "shipped; arrives Friday" }] });
  assert.equal(answered.choices[0].message.content, "It ships Friday.");

  const { data: whole, response } = await client.chat.completions
    .create({ model: "support", user, messages: [{ role: "user", content: "My order number is 4417." }] })
    .withResponse();
  const conversation = response.headers.get("x-octopus-conversation");
  assert.equal(whole.choices[0].message.content, "echo: My order number is 4417.");
  assert.ok(whole.usage.total_tokens > 0);
  assert.equal(whole.octopus.conversation_id, conversation);

  const stream = await client.chat.completions.create({ model: "support", user, stream: true,
    stream_options: { include_usage: true }, messages: [{ role: "user", content: "What is my order number?" }] });
  let text = "", usage = null, finish = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text += c.delta.content ?? "";
      finish = c.finish_reason ?? finish;
    }
  }
  assert.equal(text, "echo: What is my order number?");
  assert.equal(finish, "stop");
  assert.ok(usage && usage.total_tokens > 0);
  console.log(JSON.stringify({ conversation }));
}

main().catch((error) => { console.error(error); process.exit(1); });
