// Octopus in the Vercel AI SDK: a language-model middleware that adds what
// Octopus holds for the user's message (facts, knowledge, procedures, past
// conversations) to the prompt, and keeps the exchange in an Octopus
// conversation, whole or streamed. A thin layer over the client; needs the
// `ai` package (6.x) beside it.
import { AISDKError } from "ai";
import { OctopusError } from "./index.js";
/** An error of the Octopus server, thrown where the AI SDK called it: an
 * `AISDKError` with the API's `status`, `code` and `field`. */
export class OctopusAISDKError extends AISDKError {
    status;
    code;
    field;
    constructor(error) {
        super({ name: "OctopusAISDKError", message: error.message, cause: error });
        this.status = error.status;
        this.code = error.code;
        this.field = error.field;
    }
}
/**
 * A middleware for `wrapLanguageModel`: before each call, Octopus assembles
 * its working memory for the prompt's last user message, and its memory
 * blocks go in as one system message after the prompt's own; after it, the
 * user's message and the model's text are appended to the conversation.
 */
export function octopusMemory(options) {
    const { octopus } = options;
    if (!options.conversationId && !(options.agentId && options.userId)) {
        throw new TypeError("give conversationId, or agentId and userId");
    }
    let conversationId = options.conversationId;
    const started = async () => {
        if (!conversationId) {
            const spec = { agent_id: options.agentId, user_id: options.userId };
            conversationId = (await raising(octopus.createConversation(spec))).id;
        }
        return conversationId;
    };
    const keep = async (prompt, reply) => {
        const asked = lastUserText(prompt);
        const messages = [];
        if (asked)
            messages.push({ role: "user", content: asked });
        if (reply)
            messages.push({ role: "assistant", content: reply });
        if (messages.length)
            await raising(octopus.appendMessages(await started(), { messages }));
    };
    return {
        specificationVersion: "v3",
        get conversationId() {
            return conversationId;
        },
        async transformParams({ params }) {
            const asked = lastUserText(params.prompt);
            if (!asked)
                return params;
            const context = await raising(octopus.buildContext(await started(), { message: asked }));
            const memory = memoryOf(context);
            if (!memory.length)
                return params;
            const prompt = [...params.prompt];
            const leadingSystem = prompt.findIndex((message) => message.role !== "system");
            prompt.splice(leadingSystem < 0 ? prompt.length : leadingSystem, 0, { role: "system", content: memory.join("\n\n") });
            return { ...params, prompt };
        },
        async wrapGenerate({ doGenerate, params }) {
            const result = await doGenerate();
            const text = result.content.map((part) => (part.type === "text" ? part.text : "")).join("");
            await keep(params.prompt, text);
            return result;
        },
        async wrapStream({ doStream, params }) {
            const { stream, ...rest } = await doStream();
            let text = "";
            const kept = new TransformStream({
                transform(part, controller) {
                    if (part.type === "text-delta")
                        text += part.delta;
                    controller.enqueue(part);
                },
                async flush() {
                    await keep(params.prompt, text);
                },
            });
            return { stream: stream.pipeThrough(kept), ...rest };
        },
    };
}
/** The memory blocks of an assembled context, without the agent's system
 * prompt, the history or the message. */
function memoryOf(context) {
    const kept = new Map(context.trace.blocks.map((block) => [block.block, block.items]));
    const start = kept.get("system_prompt") ? 1 : 0;
    const count = ["procedures", "facts", "knowledge", "episodic"].filter((name) => kept.get(name)).length;
    return context.messages.slice(start, start + count).map((message) => textOf(message.content));
}
function textOf(content) {
    if (typeof content === "string")
        return content;
    if (!Array.isArray(content))
        return "";
    return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
}
function lastUserText(prompt) {
    for (let i = prompt.length - 1; i >= 0; i--) {
        const message = prompt[i];
        if (message.role === "user") {
            return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
        }
    }
    return "";
}
async function raising(call) {
    try {
        return await call;
    }
    catch (error) {
        throw error instanceof OctopusError ? new OctopusAISDKError(error) : error;
    }
}
