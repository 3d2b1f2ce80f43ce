/**
 * A typed client for Octopus, the memory server for LLM agents, for Node
 * (18 and later) and browsers: one method per operation of the API, named by
 * its operation id in camelCase, with the types of `./schema.ts`, which
 * openapi-typescript generates from the server's `/openapi.json`.
 */
/** The server refused a request, or failed it: `code` is the API's stable error code. */
export class OctopusError extends Error {
    status;
    code;
    field;
    body;
    constructor(status, code, message, field, body) {
        super(`${status} ${code}: ${message}${field ? ` (${field})` : ""}`);
        this.name = "OctopusError";
        this.status = status;
        this.code = code;
        this.field = field;
        this.body = body;
    }
    /** From an error body, `{"error": {"code", "message", "field"}}`. */
    static fromBody(status, body, fallback) {
        const detail = body?.error;
        if (detail && typeof detail.code === "string") {
            const field = typeof detail.field === "string" ? detail.field : undefined;
            return new OctopusError(status, detail.code, String(detail.message ?? ""), field, body);
        }
        return new OctopusError(status, "unexpected_response", fallback, undefined, body);
    }
}
const segment = (value) => encodeURIComponent(value);
/** A client of one Octopus server, with one key. Every method rejects with
 * {@link OctopusError} when the server answers with an error. */
export class Octopus {
    baseUrl;
    apiKey;
    fetchImpl;
    constructor(options) {
        this.baseUrl = options.baseUrl.replace(/\/+$/, "");
        this.apiKey = options.apiKey;
        this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    }
    async send(method, path, request = {}) {
        const url = new URL(this.baseUrl + path);
        for (const [name, value] of Object.entries(request.query ?? {})) {
            if (value !== undefined && value !== null)
                url.searchParams.set(name, String(value));
        }
        const headers = { ...request.headers };
        if (this.apiKey)
            headers.authorization = `Bearer ${this.apiKey}`;
        let body;
        if (request.body !== undefined) {
            headers["content-type"] = "application/json";
            body = JSON.stringify(request.body);
        }
        else if (request.text !== undefined) {
            body = request.text;
        }
        const response = await this.fetchImpl(url, { method, headers, body });
        if (!response.ok)
            throw await errorOf(response);
        return response;
    }
    async json(method, path, request) {
        return (await (await this.send(method, path, request)).json());
    }
    async items(path, query) {
        return (await this.json("GET", path, { query })).items;
    }
    // Health and operations
    /** Whether the process is up. */
    healthz() {
        return this.json("GET", "/healthz");
    }
    /** Whether the process is up (as `healthz`). */
    health() {
        return this.json("GET", "/health");
    }
    /**
     * The server's version, storage and embedding model, and the memory work
     * waiting for the caller's tenant (every tenant's, with the admin key):
     * recall finds new messages by meaning once `waiting` is 0. With
     * `agent_id`, whether that agent's model can be called.
     */
    status(query = {}) {
        return this.json("GET", "/v1/status", { query });
    }
    /** Whether the server can serve: its storage answers. */
    readyz() {
        return this.json("GET", "/readyz");
    }
    /** The Prometheus metrics (admin key). */
    async metrics() {
        return (await this.send("GET", "/metrics")).text();
    }
    // Tenants and keys (admin key)
    listTenants(query = {}) {
        return this.items("/v1/tenants", query);
    }
    createTenant(body) {
        return this.json("POST", "/v1/tenants", { body });
    }
    getTenant(tenantId) {
        return this.json("GET", `/v1/tenants/${segment(tenantId)}`);
    }
    /** Delete a tenant and everything under it (admin key). Cannot be undone. */
    deleteTenant(tenantId) {
        return this.json("DELETE", `/v1/tenants/${segment(tenantId)}`);
    }
    listApiKeys(tenantId) {
        return this.items(`/v1/tenants/${segment(tenantId)}/keys`);
    }
    /** A new key for the tenant; its secret is in the answer, and only there. */
    createApiKey(tenantId, body) {
        return this.json("POST", `/v1/tenants/${segment(tenantId)}/keys`, { body });
    }
    async revokeApiKey(tenantId, keyId) {
        await this.send("DELETE", `/v1/tenants/${segment(tenantId)}/keys/${segment(keyId)}`);
    }
    /** A tenant's data (or one user's), as a dump: JSON Lines. */
    async exportTenantDump(tenantId, query = {}) {
        return (await this.send("GET", `/v1/tenants/${segment(tenantId)}/export`, { query })).text();
    }
    // Agents
    listAgents(query = {}) {
        return this.items("/v1/agents", query);
    }
    createAgent(body) {
        return this.json("POST", "/v1/agents", { body });
    }
    getAgent(agentId) {
        return this.json("GET", `/v1/agents/${segment(agentId)}`);
    }
    /** A JSON merge patch: the fields given replace the agent's, `llm` and
     * `memory` merge field by field, and `null` resets an optional field. */
    updateAgent(agentId, patch) {
        return this.json("PATCH", `/v1/agents/${segment(agentId)}`, { body: patch });
    }
    async deleteAgent(agentId) {
        await this.send("DELETE", `/v1/agents/${segment(agentId)}`);
    }
    // Users
    listUsers(agentId, query = {}) {
        return this.items(`/v1/agents/${segment(agentId)}/users`, query);
    }
    /** What holds about a user now: instructions, preferences, facts by
     * category, recent conversations a line each, and how much they talked. */
    userProfile(agentId, userId) {
        return this.json("GET", `/v1/agents/${segment(agentId)}/users/${segment(userId)}/profile`);
    }
    listFacts(agentId, userId, query = {}) {
        return this.items(`/v1/agents/${segment(agentId)}/users/${segment(userId)}/facts`, query);
    }
    /** Add a fact about a user by hand (`source: manual`, of no conversation). */
    addFact(agentId, userId, body) {
        return this.json("POST", `/v1/agents/${segment(agentId)}/users/${segment(userId)}/facts`, { body });
    }
    /** Erase everything about a user (or what they said to one agent). Cannot be undone. */
    forgetUser(userId, query = {}) {
        return this.json("DELETE", `/v1/users/${segment(userId)}`, { query });
    }
    // Facts, one at a time
    getFact(factId) {
        return this.json("GET", `/v1/facts/${segment(factId)}`);
    }
    /** Correct a fact that holds: the answer is the new version, which replaces it; the old one is kept in its history. */
    correctFact(factId, edit) {
        return this.json("PATCH", `/v1/facts/${segment(factId)}`, { body: edit });
    }
    /** Delete a fact, every version of it, from every store. Cannot be undone. */
    deleteFact(factId, query = {}) {
        return this.json("DELETE", `/v1/facts/${segment(factId)}`, { query });
    }
    factHistory(factId) {
        return this.items(`/v1/facts/${segment(factId)}/history`);
    }
    // Webhooks: signed events when memory changes
    /**
     * Register an endpoint for events; the answer holds its signing secret
     * (`whsec_…`), shown this once. Verify each delivery with it (any Standard
     * Webhooks library).
     */
    createWebhook(body) {
        return this.json("POST", "/v1/webhooks", { body });
    }
    listWebhooks() {
        return this.items("/v1/webhooks");
    }
    getWebhook(webhookId) {
        return this.json("GET", `/v1/webhooks/${segment(webhookId)}`);
    }
    /** Delete an endpoint and its delivery log. */
    async deleteWebhook(webhookId) {
        await this.send("DELETE", `/v1/webhooks/${segment(webhookId)}`);
    }
    /** Enable an endpoint that was disabled: what is written from now on is delivered. */
    enableWebhook(webhookId) {
        return this.json("POST", `/v1/webhooks/${segment(webhookId)}/enable`);
    }
    /** An endpoint's deliveries, newest first: state, attempts, last status and error. */
    listDeliveries(webhookId, query = {}) {
        return this.items(`/v1/webhooks/${segment(webhookId)}/deliveries`, query);
    }
    // Conversations, messages and turns
    listConversations(query = {}) {
        return this.items("/v1/conversations", query);
    }
    createConversation(body) {
        return this.json("POST", "/v1/conversations", { body });
    }
    /** Past conversations with their original timestamps: one episode per session. */
    importConversation(body) {
        return this.json("POST", "/v1/conversations/import", { body });
    }
    /**
     * A person's conversations from a ChatGPT or Claude data export (its
     * `conversations.json`, as it is) as their past with the agent. Importing
     * the same conversations again adds nothing.
     */
    importChats(exported, options) {
        return this.json("POST", `/v1/conversations/import/${segment(options.format)}`, {
            text: exported,
            headers: { "content-type": "application/json" },
            query: { agent_id: options.agentId, user_id: options.userId },
        });
    }
    getConversation(conversationId) {
        return this.json("GET", `/v1/conversations/${segment(conversationId)}`);
    }
    async deleteConversation(conversationId) {
        await this.send("DELETE", `/v1/conversations/${segment(conversationId)}`);
    }
    /** Store messages (`{messages: [...]}`, or one message) in the conversation. */
    appendMessages(conversationId, body) {
        return this.json("POST", `/v1/conversations/${segment(conversationId)}/messages`, { body });
    }
    /** Erase one message from every store, with the facts learned from it. Cannot be undone. */
    eraseMessage(messageId, query = {}) {
        return this.json("DELETE", `/v1/messages/${segment(messageId)}`, { query });
    }
    /** The working memory for the user's next message: what the model would see, and why. */
    buildContext(conversationId, body) {
        return this.json("POST", `/v1/conversations/${segment(conversationId)}/context`, { body });
    }
    /** One turn: the message goes to the agent's model with its working memory. */
    takeTurn(conversationId, body) {
        const whole = { ...body, stream: false };
        return this.json("POST", `/v1/conversations/${segment(conversationId)}/turns`, { body: whole });
    }
    /** One turn, streamed: `delta` events as the model writes, then `done`
     * with the whole reply. A failure after the stream began throws
     * {@link OctopusError}. */
    async *streamTurn(conversationId, body) {
        const path = `/v1/conversations/${segment(conversationId)}/turns`;
        const response = await this.send("POST", path, { body: { ...body, stream: true } });
        if (!response.body)
            throw new OctopusError(response.status, "unexpected_response", "no body");
        yield* turnEvents(response.body);
    }
    // Episodes
    listEpisodes(query = {}) {
        return this.items("/v1/episodes", query);
    }
    /** An episode with its messages, summary and key facts. */
    getEpisode(episodeId) {
        return this.json("GET", `/v1/episodes/${segment(episodeId)}`);
    }
    closeEpisode(episodeId, body) {
        return this.json("POST", `/v1/episodes/${segment(episodeId)}/close`, { body });
    }
    setEpisodeSummary(episodeId, body) {
        return this.json("PUT", `/v1/episodes/${segment(episodeId)}/summary`, { body });
    }
    /** Soft delete: the episode leaves search and recall, and can be restored. */
    deleteEpisode(episodeId) {
        return this.json("DELETE", `/v1/episodes/${segment(episodeId)}`);
    }
    restoreEpisode(episodeId) {
        return this.json("POST", `/v1/episodes/${segment(episodeId)}/restore`);
    }
    /** Remove a soft-deleted episode for good. */
    async purgeEpisode(episodeId) {
        await this.send("POST", `/v1/episodes/${segment(episodeId)}/purge`);
    }
    /** Ask the agent's model for a procedure learned from the episode; it waits for approval. */
    proposeProcedure(episodeId) {
        return this.json("POST", `/v1/episodes/${segment(episodeId)}/procedures/propose`);
    }
    // Search and recall
    /** Full-text search over messages, ranked by BM25. */
    searchMessages(query) {
        return this.items("/v1/messages/search", query);
    }
    /** What the agent remembers of a user, by meaning and by words. */
    async recall(agentId, body) {
        const page = await this.json("POST", `/v1/agents/${segment(agentId)}/recall`, { body });
        return page.items;
    }
    // Knowledge
    knowledgeInfo(agentId) {
        return this.json("GET", `/v1/agents/${segment(agentId)}/knowledge`);
    }
    /** Chunk, embed and store a document; a source ingested again replaces its chunks. */
    ingestDocument(agentId, body) {
        return this.json("POST", `/v1/agents/${segment(agentId)}/knowledge/documents`, { body });
    }
    listDocuments(agentId, query = {}) {
        return this.items(`/v1/agents/${segment(agentId)}/knowledge/documents`, query);
    }
    readDocument(agentId, query) {
        return this.json("GET", `/v1/agents/${segment(agentId)}/knowledge/document`, { query });
    }
    /** Search by meaning, by words, or both (`mode`), each hit with its scores. */
    async searchKnowledge(agentId, body) {
        const page = await this.json("POST", `/v1/agents/${segment(agentId)}/knowledge/search`, { body });
        return page.items;
    }
    async deleteChunk(agentId, chunkId) {
        await this.send("DELETE", `/v1/agents/${segment(agentId)}/knowledge/chunks/${segment(chunkId)}`);
    }
    // Procedures
    listProcedures(query = {}) {
        return this.items("/v1/procedures", query);
    }
    /** A new procedure; its first version waits for approval. */
    createProcedure(body) {
        return this.json("POST", "/v1/procedures", { body });
    }
    getProcedure(procedureId) {
        return this.json("GET", `/v1/procedures/${segment(procedureId)}`);
    }
    /** A JSON merge patch; a change of its steps or trigger is a new version, pending approval. */
    updateProcedure(procedureId, patch) {
        return this.json("PATCH", `/v1/procedures/${segment(procedureId)}`, { body: patch });
    }
    async deleteProcedure(procedureId) {
        await this.send("DELETE", `/v1/procedures/${segment(procedureId)}`);
    }
    /** Approve the pending version: from now on it is the one served. */
    approveProcedure(procedureId) {
        return this.json("POST", `/v1/procedures/${segment(procedureId)}/approve`);
    }
    rejectProcedure(procedureId) {
        return this.json("POST", `/v1/procedures/${segment(procedureId)}/reject`);
    }
    /** Serve an earlier approved version again. */
    rollbackProcedure(procedureId, body) {
        return this.json("POST", `/v1/procedures/${segment(procedureId)}/rollback`, { body });
    }
    procedureVersions(procedureId) {
        return this.items(`/v1/procedures/${segment(procedureId)}/versions`);
    }
    // Dumps
    /** The tenant's data (or one user's), as a dump: JSON Lines. */
    async exportDump(query = {}) {
        return (await this.send("GET", "/v1/export", { query })).text();
    }
    /** Import a dump whole, or nothing of it. */
    importDump(dump) {
        return this.json("POST", "/v1/import", { text: dump, headers: { "content-type": "application/x-ndjson" } });
    }
    // The OpenAI-compatible door (the `openai` package speaks it in full, streams included)
    /** The tenant's active agents, as OpenAI `model` objects. */
    listModels() {
        return this.json("GET", "/v1/models");
    }
    /** A whole `chat.completion` from an agent (`model` names it). */
    chatCompletion(body, headers = {}) {
        if (body.stream)
            throw new TypeError("chatCompletion answers whole; stream with the `openai` package");
        const sent = {};
        if (headers.user !== undefined)
            sent["x-octopus-user"] = headers.user;
        if (headers.conversationId !== undefined)
            sent["x-octopus-conversation"] = headers.conversationId;
        return this.json("POST", "/v1/chat/completions", { body, headers: sent });
    }
}
async function errorOf(response) {
    const text = await response.text();
    let body = text;
    try {
        body = JSON.parse(text);
    }
    catch {
        // Not JSON: the text is kept as the body.
    }
    return OctopusError.fromBody(response.status, body, text.slice(0, 500));
}
/** The events of a turn's server-sent event stream; an `error` event throws. */
export async function* turnEvents(stream) {
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    let name = "message";
    let data = [];
    for (;;) {
        const { value, done } = await reader.read();
        if (done)
            break;
        buffered += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffered.indexOf("\n")) >= 0) {
            const line = buffered.slice(0, end).replace(/\r$/, "");
            buffered = buffered.slice(end + 1);
            if (line.startsWith(":"))
                continue;
            if (line !== "") {
                const colon = line.indexOf(":");
                const field = colon < 0 ? line : line.slice(0, colon);
                const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
                if (field === "event")
                    name = text;
                else if (field === "data")
                    data.push(text);
                continue;
            }
            if (data.length > 0) {
                const event = turnEvent(name, data.join("\n"));
                if (event)
                    yield event;
            }
            name = "message";
            data = [];
        }
    }
}
function turnEvent(name, data) {
    const payload = JSON.parse(data);
    if (name === "delta")
        return { type: "delta", text: payload.text };
    if (name === "done")
        return { type: "done", reply: payload };
    if (name === "error")
        throw OctopusError.fromBody(Number(payload.status ?? 0), payload, data.slice(0, 500));
    return undefined;
}
