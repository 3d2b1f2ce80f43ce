/**
 * A typed client for Octopus, the memory server for LLM agents, for Node
 * (18 and later) and browsers: one method per operation of the API, named by
 * its operation id in camelCase, with the types of `./schema.ts`, which
 * openapi-typescript generates from the server's `/openapi.json`.
 */
import type { components } from "./schema.js";
export type { components, paths, operations } from "./schema.js";
/** Every schema of the API, by name: `Schemas["Agent"]`. */
export type Schemas = components["schemas"];
type Id = string;
type JsonObject = Record<string, unknown>;
/** The server refused a request, or failed it: `code` is the API's stable error code. */
export declare class OctopusError extends Error {
    readonly status: number;
    readonly code: string;
    readonly field: string | undefined;
    readonly body: unknown;
    constructor(status: number, code: string, message: string, field?: string, body?: unknown);
    /** From an error body, `{"error": {"code", "message", "field"}}`. */
    static fromBody(status: number, body: unknown, fallback: string): OctopusError;
}
/** A piece of a streamed reply's text, as the model writes it. */
export interface TextDelta {
    type: "delta";
    text: string;
}
/** The turn is over: the whole reply, its tool calls and its memory trace. */
export interface TurnDone {
    type: "done";
    reply: Schemas["TurnReply"];
}
export type TurnEvent = TextDelta | TurnDone;
export interface OctopusOptions {
    /** The server, e.g. `http://127.0.0.1:7700`. */
    baseUrl: string;
    /** A tenant's key, or the admin key. */
    apiKey?: string;
    /** A `fetch` of your own (a proxy, a test double); the global one by default. */
    fetch?: typeof fetch;
}
/** A client of one Octopus server, with one key. Every method rejects with
 * {@link OctopusError} when the server answers with an error. */
export declare class Octopus {
    readonly baseUrl: string;
    private readonly apiKey;
    private readonly fetchImpl;
    constructor(options: OctopusOptions);
    private send;
    private json;
    private items;
    /** Whether the process is up. */
    healthz(): Promise<{
        status: string;
    }>;
    /** Whether the process is up (as `healthz`). */
    health(): Promise<{
        status: string;
    }>;
    /**
     * The server's version, storage and embedding model, and the memory work
     * waiting for the caller's tenant (every tenant's, with the admin key):
     * recall finds new messages by meaning once `waiting` is 0. With
     * `agent_id`, whether that agent's model can be called.
     */
    status(query?: {
        agent_id?: Id;
    }): Promise<Schemas["ServerStatus"]>;
    /** Whether the server can serve: its storage answers. */
    readyz(): Promise<{
        status: string;
    }>;
    /** The Prometheus metrics (admin key). */
    metrics(): Promise<string>;
    listTenants(query?: {
        limit?: number;
        offset?: number;
    }): Promise<Schemas["Tenant"][]>;
    createTenant(body: Schemas["CreateTenant"]): Promise<Schemas["Tenant"]>;
    getTenant(tenantId: Id): Promise<Schemas["Tenant"]>;
    /** Delete a tenant and everything under it (admin key). Cannot be undone. */
    deleteTenant(tenantId: Id): Promise<Schemas["TenantDeletionReceipt"]>;
    listApiKeys(tenantId: Id): Promise<Schemas["ApiKey"][]>;
    /** A new key for the tenant; its secret is in the answer, and only there. */
    createApiKey(tenantId: Id, body: Schemas["CreateApiKey"]): Promise<Schemas["CreatedApiKey"]>;
    revokeApiKey(tenantId: Id, keyId: Id): Promise<void>;
    /** A tenant's data (or one user's), as a dump: JSON Lines. */
    exportTenantDump(tenantId: Id, query?: {
        user_id?: string;
    }): Promise<string>;
    listAgents(query?: {
        limit?: number;
        offset?: number;
    }): Promise<Schemas["Agent"][]>;
    createAgent(body: Schemas["AgentSpec"]): Promise<Schemas["Agent"]>;
    getAgent(agentId: Id): Promise<Schemas["Agent"]>;
    /** A JSON merge patch: the fields given replace the agent's, `llm` and
     * `memory` merge field by field, and `null` resets an optional field. */
    updateAgent(agentId: Id, patch: JsonObject): Promise<Schemas["Agent"]>;
    deleteAgent(agentId: Id): Promise<void>;
    listUsers(agentId: Id, query?: {
        limit?: number;
        offset?: number;
    }): Promise<Schemas["UserSummary"][]>;
    /** What holds about a user now: instructions, preferences, facts by
     * category, recent conversations a line each, and how much they talked. */
    userProfile(agentId: Id, userId: string): Promise<Schemas["UserProfile"]>;
    listFacts(agentId: Id, userId: string, query?: {
        include_replaced?: boolean;
        category?: string;
        key?: string;
        limit?: number;
        offset?: number;
    }): Promise<Schemas["Fact"][]>;
    /** Add a fact about a user by hand (`source: manual`, of no conversation). */
    addFact(agentId: Id, userId: string, body: Schemas["NewFactSpec"]): Promise<Schemas["Fact"]>;
    /** Erase everything about a user (or what they said to one agent). Cannot be undone. */
    forgetUser(userId: string, query?: {
        agent_id?: Id;
    }): Promise<Schemas["ForgetReceipt"]>;
    getFact(factId: Id): Promise<Schemas["Fact"]>;
    /** Correct a fact that holds: the answer is the new version, which replaces it; the old one is kept in its history. */
    correctFact(factId: Id, edit: Schemas["FactEdit"]): Promise<Schemas["Fact"]>;
    /** Delete a fact, every version of it, from every store. Cannot be undone. */
    deleteFact(factId: Id, query?: {
        reason?: string;
    }): Promise<Schemas["FactDeletionReceipt"]>;
    factHistory(factId: Id): Promise<Schemas["FactHistoryEntry"][]>;
    /**
     * Register an endpoint for events; the answer holds its signing secret
     * (`whsec_…`), shown this once. Verify each delivery with it (any Standard
     * Webhooks library).
     */
    createWebhook(body: Schemas["NewWebhook"]): Promise<Schemas["CreatedWebhook"]>;
    listWebhooks(): Promise<Schemas["WebhookInfo"][]>;
    getWebhook(webhookId: Id): Promise<Schemas["WebhookInfo"]>;
    /** Delete an endpoint and its delivery log. */
    deleteWebhook(webhookId: Id): Promise<void>;
    /** Enable an endpoint that was disabled: what is written from now on is delivered. */
    enableWebhook(webhookId: Id): Promise<Schemas["WebhookInfo"]>;
    /** An endpoint's deliveries, newest first: state, attempts, last status and error. */
    listDeliveries(webhookId: Id, query?: {
        limit?: number;
        offset?: number;
    }): Promise<Schemas["Delivery"][]>;
    listConversations(query?: {
        agent_id?: Id;
        user_id?: string;
        include_deleted?: boolean;
        limit?: number;
        offset?: number;
    }): Promise<Schemas["Conversation"][]>;
    createConversation(body: Schemas["ConversationSpec"]): Promise<Schemas["Conversation"]>;
    /** Past conversations with their original timestamps: one episode per session. */
    importConversation(body: Schemas["ConversationImport"]): Promise<Schemas["ImportResponse"]>;
    /**
     * A person's conversations from a ChatGPT or Claude data export (its
     * `conversations.json`, as it is) as their past with the agent. Importing
     * the same conversations again adds nothing.
     */
    importChats(exported: string, options: {
        format: "chatgpt" | "claude";
        agentId: Id;
        userId: string;
    }): Promise<Schemas["ChatsImported"]>;
    getConversation(conversationId: Id): Promise<Schemas["Conversation"]>;
    deleteConversation(conversationId: Id): Promise<void>;
    /** Store messages (`{messages: [...]}`, or one message) in the conversation. */
    appendMessages(conversationId: Id, body: Schemas["AppendMessagesRequest"] | Schemas["NewMessage"]): Promise<Schemas["AppendedMessages"]>;
    /** Erase one message from every store, with the facts learned from it. Cannot be undone. */
    eraseMessage(messageId: Id, query?: {
        reason?: string;
    }): Promise<Schemas["MessageErasureReceipt"]>;
    /** The working memory for the user's next message: what the model would see, and why. */
    buildContext(conversationId: Id, body: Schemas["ContextRequest"]): Promise<Schemas["ContextResponse"]>;
    /** One turn: the message goes to the agent's model with its working memory. */
    takeTurn(conversationId: Id, body: Schemas["TurnRequest"]): Promise<Schemas["TurnReply"]>;
    /** One turn, streamed: `delta` events as the model writes, then `done`
     * with the whole reply. A failure after the stream began throws
     * {@link OctopusError}. */
    streamTurn(conversationId: Id, body: Schemas["TurnRequest"]): AsyncGenerator<TurnEvent>;
    listEpisodes(query?: {
        agent_id?: Id;
        user_id?: string;
        conversation_id?: Id;
        from?: string;
        to?: string;
        deleted?: boolean;
        archived?: boolean;
        limit?: number;
        offset?: number;
    }): Promise<Schemas["Episode"][]>;
    /** An episode with its messages, summary and key facts. */
    getEpisode(episodeId: Id): Promise<Schemas["EpisodeWithMessages"]>;
    closeEpisode(episodeId: Id, body: Schemas["CloseEpisodeRequest"]): Promise<Schemas["Episode"]>;
    setEpisodeSummary(episodeId: Id, body: Schemas["EpisodeSummaryRequest"]): Promise<Schemas["Episode"]>;
    /** Soft delete: the episode leaves search and recall, and can be restored. */
    deleteEpisode(episodeId: Id): Promise<Schemas["Episode"]>;
    restoreEpisode(episodeId: Id): Promise<Schemas["Episode"]>;
    /** Remove a soft-deleted episode for good. */
    purgeEpisode(episodeId: Id): Promise<void>;
    /** Ask the agent's model for a procedure learned from the episode; it waits for approval. */
    proposeProcedure(episodeId: Id): Promise<Schemas["Procedure"]>;
    /** Full-text search over messages, ranked by BM25. */
    searchMessages(query: {
        q: string;
        agent_id?: Id;
        user_id?: string;
        conversation_id?: Id;
        from?: string;
        to?: string;
        limit?: number;
    }): Promise<Schemas["MessageHit"][]>;
    /** What the agent remembers of a user, by meaning and by words. */
    recall(agentId: Id, body: Schemas["RecallQuery"]): Promise<Schemas["RecallHit"][]>;
    knowledgeInfo(agentId: Id): Promise<Schemas["KnowledgeInfo"]>;
    /** Chunk, embed and store a document; a source ingested again replaces its chunks. */
    ingestDocument(agentId: Id, body: Schemas["IngestRequest"]): Promise<Schemas["IngestResponse"]>;
    listDocuments(agentId: Id, query?: {
        limit?: number;
        offset?: number;
    }): Promise<Schemas["DocumentSummary"][]>;
    readDocument(agentId: Id, query: {
        source: string;
    }): Promise<Schemas["Document"]>;
    /** Search by meaning, by words, or both (`mode`), each hit with its scores. */
    searchKnowledge(agentId: Id, body: Schemas["KnowledgeSearchRequest"]): Promise<Schemas["KnowledgeHit"][]>;
    deleteChunk(agentId: Id, chunkId: Id): Promise<void>;
    listProcedures(query?: {
        agent_id?: Id;
        shared?: boolean;
        active?: boolean;
        approved?: boolean;
        text?: string;
        limit?: number;
        offset?: number;
    }): Promise<Schemas["Procedure"][]>;
    /** A new procedure; its first version waits for approval. */
    createProcedure(body: Schemas["ProcedureSpec"]): Promise<Schemas["Procedure"]>;
    getProcedure(procedureId: Id): Promise<Schemas["Procedure"]>;
    /** A JSON merge patch; a change of its steps or trigger is a new version, pending approval. */
    updateProcedure(procedureId: Id, patch: JsonObject): Promise<Schemas["Procedure"]>;
    deleteProcedure(procedureId: Id): Promise<void>;
    /** Approve the pending version: from now on it is the one served. */
    approveProcedure(procedureId: Id): Promise<Schemas["Procedure"]>;
    rejectProcedure(procedureId: Id): Promise<Schemas["Procedure"]>;
    /** Serve an earlier approved version again. */
    rollbackProcedure(procedureId: Id, body: Schemas["RollbackRequest"]): Promise<Schemas["Procedure"]>;
    procedureVersions(procedureId: Id): Promise<Schemas["ProcedureVersion"][]>;
    /** The tenant's data (or one user's), as a dump: JSON Lines. */
    exportDump(query?: {
        user_id?: string;
    }): Promise<string>;
    /** Import a dump whole, or nothing of it. */
    importDump(dump: string): Promise<Schemas["DumpImported"]>;
    /** The tenant's active agents, as OpenAI `model` objects. */
    listModels(): Promise<{
        object: "list";
        data: {
            id: string;
            object: "model";
            owned_by: string;
        }[];
    }>;
    /** A whole `chat.completion` from an agent (`model` names it). */
    chatCompletion(body: Schemas["ChatCompletionRequest"], headers?: {
        user?: string;
        conversationId?: Id;
    }): Promise<JsonObject>;
}
/** The events of a turn's server-sent event stream; an `error` event throws. */
export declare function turnEvents(stream: ReadableStream<Uint8Array>): AsyncGenerator<TurnEvent>;
