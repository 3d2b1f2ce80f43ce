// A real small chat model behind OpenAI's chat-completions wire format, on
// loopback: Gemma 3 270M (GGUF, from PyPI) run by llama.cpp through npm's
// node-llama-cpp, for the answer harness's end-to-end test with a model that
// is not a fake. Answers one request at a time, greedily (temperature 0),
// honours `response_format: {"type": "json_object"}` with llama.cpp's JSON
// grammar, and reports the model's own token counts as `usage`.
//
//   node small_model_server.mjs MODEL.gguf NODE_MODULES
//
// prints "listening on http://127.0.0.1:PORT/v1" once ready.

import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modelPath, nodeModules] = process.argv.slice(2);
const entry = path.join(nodeModules, "node-llama-cpp", "dist", "index.js");
const { getLlama, LlamaChatSession, GemmaChatWrapper } = await import(pathToFileURL(entry).href);

const llama = await getLlama({ gpu: false, build: "never" });
const model = await llama.loadModel({ modelPath });
// Two threads: the machine's cores. More (the default) oversubscribes them
// and slows every token many times over.
const context = await model.createContext({ contextSize: 4096, threads: 2, batchSize: 512 });
const sequence = context.getSequence();
const json = await llama.getGrammarFor("json");

/// One request at a time: there is one context sequence.
let queue = Promise.resolve();

async function complete(request) {
  const messages = request.messages ?? [];
  const last = messages[messages.length - 1];
  if (!last || last.role !== "user") {
    return [400, { error: { message: "the last message must be the user's", type: "invalid_request_error" } }];
  }
  const text = (content) => (typeof content === "string" ? content : (content ?? []).map((p) => p.text ?? "").join(""));
  const system = messages.filter((m) => m.role === "system").map((m) => text(m.content)).join("\n");
  const history = [];
  if (system) history.push({ type: "system", text: system });
  for (const message of messages.slice(0, -1)) {
    if (message.role === "user") history.push({ type: "user", text: text(message.content) });
    if (message.role === "assistant") history.push({ type: "model", response: [text(message.content)] });
  }
  // Each request stands alone: nothing of the last one stays in the context.
  await sequence.clearHistory();
  const session = new LlamaChatSession({ contextSequence: sequence, chatWrapper: new GemmaChatWrapper(), autoDisposeSequence: false });
  session.setChatHistory(history);
  const before = { input: sequence.tokenMeter.usedInputTokens, output: sequence.tokenMeter.usedOutputTokens };
  const wantsJson = request.response_format?.type === "json_object";
  const answer = await session.prompt(text(last.content), {
    maxTokens: request.max_tokens ?? 48,
    temperature: 0,
    ...(wantsJson ? { grammar: json } : {}),
  });
  session.dispose({ disposeSequence: false });
  const prompt_tokens = sequence.tokenMeter.usedInputTokens - before.input;
  const completion_tokens = sequence.tokenMeter.usedOutputTokens - before.output;
  return [200, {
    id: `chatcmpl-${Date.now()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: request.model ?? "gemma-3-270m",
    choices: [{ index: 0, message: { role: "assistant", content: answer }, finish_reason: "stop" }],
    usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens },
  }];
}

const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    const reply = (status, value) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      reply(404, { error: { message: `no route ${req.method} ${req.url}`, type: "invalid_request_error" } });
      return;
    }
    let request;
    try {
      request = JSON.parse(body);
    } catch {
      reply(400, { error: { message: "the body is not JSON", type: "invalid_request_error" } });
      return;
    }
    queue = queue
      .then(() => complete(request))
      .then(([status, value]) => reply(status, value))
      .catch((error) => reply(500, { error: { message: String(error), type: "server_error" } }));
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/v1`);
});
