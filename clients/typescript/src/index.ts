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
export class OctopusError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  readonly body: unknown;

  constructor(status: number, code: string, message: string, field?: string, body?: unknown) {
    super(`${status} ${code}: ${message}${field ? ` (${field})` : ""}`);
    this.name = "OctopusError";
    this.status = status;
    this.code = code;
    this.field = field;
    this.body = body;
  }

  /** From an error body, `{"error": {"code", "message", "field"}}`. */
  static fromBody(status: number, body: unknown, fallback: string): OctopusError {
    const detail = (body as { error?: { code?: unknown; message?: unknown; field?: unknown } } | null)?.error;
    if (detail && typeof detail.code === "string") {
      const field = typeof detail.field === "string" ? detail.field : undefined;
      return new OctopusError(status, detail.code, String(detail.message ?? ""), field, body);
    }
    return new OctopusError(status, "unexpected_response", fallback, undefined, body);
  }
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

interface Request {
  query?: Record<string, string | number | boolean | undefined | null>;
  body?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

const segment = (value: Id): string => encodeURIComponent(value);

/** A client of one Octopus server, with one key. Every method rejects with
 * {@link OctopusError} when the server answers with an error. */
export class Octopus {
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(options: OctopusOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.apiKey = options.apiKey;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  private async send(method: string, path: string, request: Request = {}): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { ...request.headers };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    let body: string | undefined;
    if (request.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(request.body);
    } else if (request.text !== undefined) {
      body = request.text;
    }
    const response = await this.fetchImpl(url, { method, headers, body });
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  private async json<T>(method: string, path: string, request?: Request): Promise<T> {
    return (await (await this.send(method, path, request)).json()) as T;
  }

  private async items<T>(path: string, query?: Request["query"]): Promise<T[]> {
    return (await this.json<{ items: T[] }>("GET", path, { query })).items;
  }

  // Health and operations

  /** Whether the process is up. */
  healthz(): Promise<{ status: string }> {
    return this.json("GET", "/healthz");
  }

  /** Whether the process is up (as `healthz`). */
  health(): Promise<{ status: string }> {
    return this.json("GET", "/health");
  }

  /**
   * The server's version, storage and embedding model, and the memory work
   * waiting for the caller's tenant (every tenant's, with the admin key):
   * recall finds new messages by meaning once `waiting` is 0. With
   * `agent_id`, whether that agent's model can be called.
   */
  status(query: { agent_id?: Id } = {}): Promise<Schemas["ServerStatus"]> {
    return this.json("GET", "/v1/status", { query });
  }

  /** Whether the server can serve: its storage answers. */
  readyz(): Promise<{ status: string }> {
    return this.json("GET", "/readyz");
  }

  /** The Prometheus metrics (admin key). */
  async metrics(): Promise<string> {
    return (await this.send("GET", "/metrics")).text();
  }

  // Tenants and keys (admin key)

  listTenants(query: { limit?: number; offset?: number } = {}): Promise<Schemas["Tenant"][]> {
    return this.items("/v1/tenants", query);
  }

  createTenant(body: Schemas["CreateTenant"]): Promise<Schemas["Tenant"]> {
    return this.json("POST", "/v1/tenants", { body });
  }

  getTenant(tenantId: Id): Promise<Schemas["Tenant"]> {
    return this.json("GET", `/v1/tenants/${segment(tenantId)}`);
  }

  /** Delete a tenant and everything under it (admin key). Cannot be undone. */
  deleteTenant(tenantId: Id): Promise<Schemas["TenantDeletionReceipt"]> {
    return this.json("DELETE", `/v1/tenants/${segment(tenantId)}`);
  }

  listApiKeys(tenantId: Id): Promise<Schemas["ApiKey"][]> {
    return this.items(`/v1/tenants/${segment(tenantId)}/keys`);
  }

  /** A new key for the tenant; its secret is in the answer, and only there. */
  createApiKey(tenantId: Id, body: Schemas["CreateApiKey"]): Promise<Schemas["CreatedApiKey"]> {
    return this.json("POST", `/v1/tenants/${segment(tenantId)}/keys`, { body });
  }

  async revokeApiKey(tenantId: Id, keyId: Id): Promise<void> {
    await this.send("DELETE", `/v1/tenants/${segment(tenantId)}/keys/${segment(keyId)}`);
  }

  /** A tenant's data (or one user's), as a dump: JSON Lines. */
  async exportTenantDump(tenantId: Id, query: { user_id?: string } = {}): Promise<string> {
    return (await this.send("GET", `/v1/tenants/${segment(tenantId)}/export`, { query })).text();
  }

  // Agents

  listAgents(query: { limit?: number; offset?: number } = {}): Promise<Schemas["Agent"][]> {
    return this.items("/v1/agents", query);
  }

  createAgent(body: Schemas["AgentSpec"]): Promise<Schemas["Agent"]> {
    return this.json("POST", "/v1/agents", { body });
  }

  getAgent(agentId: Id): Promise<Schemas["Agent"]> {
    return this.json("GET", `/v1/agents/${segment(agentId)}`);
  }

  /** A JSON merge patch: the fields given replace the agent's, `llm` and
   * `memory` merge field by field, and `null` resets an optional field. */
  updateAgent(agentId: Id, patch: JsonObject): Promise<Schemas["Agent"]> {
    return this.json("PATCH", `/v1/agents/${segment(agentId)}`, { body: patch });
  }

  async deleteAgent(agentId: Id): Promise<void> {
    await this.send("DELETE", `/v1/agents/${segment(agentId)}`);
  }

  // Users

  listUsers(agentId: Id, query: { limit?: number; offset?: number } = {}): Promise<Schemas["UserSummary"][]> {
    return this.items(`/v1/agents/${segment(agentId)}/users`, query);
  }

  /** What holds about a user now: instructions, preferences, facts by
   * category, recent conversations a line each, and how much they talked. */
  userProfile(agentId: Id, userId: string): Promise<Schemas["UserProfile"]> {
    return this.json("GET", `/v1/agents/${segment(agentId)}/users/${segment(userId)}/profile`);
  }

  listFacts(
    agentId: Id,
    userId: string,
    query: { include_replaced?: boolean; category?: string; key?: string; limit?: number; offset?: number } = {},
  ): Promise<Schemas["Fact"][]> {
    return this.items(`/v1/agents/${segment(agentId)}/users/${segment(userId)}/facts`, query);
  }

  /** Add a fact about a user by hand (`source: manual`, of no conversation). */
  addFact(agentId: Id, userId: string, body: Schemas["NewFactSpec"]): Promise<Schemas["Fact"]> {
    return this.json("POST", `/v1/agents/${segment(agentId)}/users/${segment(userId)}/facts`, { body });
  }

  /** Erase everything about a user (or what they said to one agent). Cannot be undone. */
  forgetUser(userId: string, query: { agent_id?: Id } = {}): Promise<Schemas["ForgetReceipt"]> {
    return this.json("DELETE", `/v1/users/${segment(userId)}`, { query });
  }

  // Facts, one at a time

  getFact(factId: Id): Promise<Schemas["Fact"]> {
    return this.json("GET", `/v1/facts/${segment(factId)}`);
  }

  /** Correct a fact that holds: the answer is the new version, which replaces it; the old one is kept in its history. */
  correctFact(factId: Id, edit: Schemas["FactEdit"]): Promise<Schemas["Fact"]> {
    return this.json("PATCH", `/v1/facts/${segment(factId)}`, { body: edit });
  }

  /** Delete a fact, every version of it, from every store. Cannot be undone. */
  deleteFact(factId: Id, query: { reason?: string } = {}): Promise<Schemas["FactDeletionReceipt"]> {
    return this.json("DELETE", `/v1/facts/${segment(factId)}`, { query });
  }

  factHistory(factId: Id): Promise<Schemas["FactHistoryEntry"][]> {
    return this.items(`/v1/facts/${segment(factId)}/history`);
  }

  // Webhooks: signed events when memory changes

  /**
   * Register an endpoint for events; the answer holds its signing secret
   * (`whsec_…`), shown this once. Verify each delivery with it (any Standard
   * Webhooks library).
   */
  createWebhook(body: Schemas["NewWebhook"]): Promise<Schemas["CreatedWebhook"]> {
    return this.json("POST", "/v1/webhooks", { body });
  }

  listWebhooks(): Promise<Schemas["WebhookInfo"][]> {
    return this.items("/v1/webhooks");
  }

  getWebhook(webhookId: Id): Promise<Schemas["WebhookInfo"]> {
    return this.json("GET", `/v1/webhooks/${segment(webhookId)}`);
  }

  /** Delete an endpoint and its delivery log. */
  async deleteWebhook(webhookId: Id): Promise<void> {
    await this.send("DELETE", `/v1/webhooks/${segment(webhookId)}`);
  }

  /** Enable an endpoint that was disabled: what is written from now on is delivered. */
  enableWebhook(webhookId: Id): Promise<Schemas["WebhookInfo"]> {
    return this.json("POST", `/v1/webhooks/${segment(webhookId)}/enable`);
  }

  /** An endpoint's deliveries, newest first: state, attempts, last status and error. */
  listDeliveries(webhookId: Id, query: { limit?: number; offset?: number } = {}): Promise<Schemas["Delivery"][]> {
    return this.items(`/v1/webhooks/${segment(webhookId)}/deliveries`, query);
  }

  // Conversations, messages and turns

  listConversations(
    query: { agent_id?: Id; user_id?: string; include_deleted?: boolean; limit?: number; offset?: number } = {},
  ): Promise<Schemas["Conversation"][]> {
    return this.items("/v1/conversations", query);
  }

  createConversation(body: Schemas["ConversationSpec"]): Promise<Schemas["Conversation"]> {
    return this.json("POST", "/v1/conversations", { body });
  }

  /** Past conversations with their original timestamps: one episode per session. */
  importConversation(body: Schemas["ConversationImport"]): Promise<Schemas["ImportResponse"]> {
    return this.json("POST", "/v1/conversations/import", { body });
  }

  /**
   * A person's conversations from a ChatGPT or Claude data export (its
   * `conversations.json`, as it is) as their past with the agent. Importing
   * the same conversations again adds nothing.
   */
  importChats(
    exported: string,
    options: { format: "chatgpt" | "claude"; agentId: Id; userId: string },
  ): Promise<Schemas["ChatsImported"]> {
    return this.json("POST", `/v1/conversations/import/${segment(options.format)}`, {
      text: exported,
      headers: { "content-type": "application/json" },
      query: { agent_id: options.agentId, user_id: options.userId },
    });
  }

  getConversation(conversationId: Id): Promise<Schemas["Conversation"]> {
    return this.json("GET", `/v1/conversations/${segment(conversationId)}`);
  }

  async deleteConversation(conversationId: Id): Promise<void> {
    await this.send("DELETE", `/v1/conversations/${segment(conversationId)}`);
  }

  /** Store messages (`{messages: [...]}`, or one message) in the conversation. */
  appendMessages(
    conversationId: Id,
    body: Schemas["AppendMessagesRequest"] | Schemas["NewMessage"],
  ): Promise<Schemas["AppendedMessages"]> {
    return this.json("POST", `/v1/conversations/${segment(conversationId)}/messages`, { body });
  }

  /** Erase one message from every store, with the facts learned from it. Cannot be undone. */
  eraseMessage(messageId: Id, query: { reason?: string } = {}): Promise<Schemas["MessageErasureReceipt"]> {
    return this.json("DELETE", `/v1/messages/${segment(messageId)}`, { query });
  }

  /** The working memory for the user's next message: what the model would see, and why. */
  buildContext(conversationId: Id, body: Schemas["ContextRequest"]): Promise<Schemas["ContextResponse"]> {
    return this.json("POST", `/v1/conversations/${segment(conversationId)}/context`, { body });
  }

  /** One turn: the message goes to the agent's model with its working memory. */
  takeTurn(conversationId: Id, body: Schemas["TurnRequest"]): Promise<Schemas["TurnReply"]> {
    const whole = { ...body, stream: false };
    return this.json("POST", `/v1/conversations/${segment(conversationId)}/turns`, { body: whole });
  }

  /** One turn, streamed: `delta` events as the model writes, then `done`
   * with the whole reply. A failure after the stream began throws
   * {@link OctopusError}. */
  async *streamTurn(conversationId: Id, body: Schemas["TurnRequest"]): AsyncGenerator<TurnEvent> {
    const path = `/v1/conversations/${segment(conversationId)}/turns`;
    const response = await this.send("POST", path, { body: { ...body, stream: true } });
    if (!response.body) throw new OctopusError(response.status, "unexpected_response", "no body");
    yield* turnEvents(response.body);
  }

  // Episodes

  listEpisodes(
    query: {
      agent_id?: Id;
      user_id?: string;
      conversation_id?: Id;
      from?: string;
      to?: string;
      deleted?: boolean;
      archived?: boolean;
      limit?: number;
      offset?: number;
    } = {},
  ): Promise<Schemas["Episode"][]> {
    return this.items("/v1/episodes", query);
  }

  /** An episode with its messages, summary and key facts. */
  getEpisode(episodeId: Id): Promise<Schemas["EpisodeWithMessages"]> {
    return this.json("GET", `/v1/episodes/${segment(episodeId)}`);
  }

  closeEpisode(episodeId: Id, body: Schemas["CloseEpisodeRequest"]): Promise<Schemas["Episode"]> {
    return this.json("POST", `/v1/episodes/${segment(episodeId)}/close`, { body });
  }

  setEpisodeSummary(episodeId: Id, body: Schemas["EpisodeSummaryRequest"]): Promise<Schemas["Episode"]> {
    return this.json("PUT", `/v1/episodes/${segment(episodeId)}/summary`, { body });
  }

  /** Soft delete: the episode leaves search and recall, and can be restored. */
  deleteEpisode(episodeId: Id): Promise<Schemas["Episode"]> {
    return this.json("DELETE", `/v1/episodes/${segment(episodeId)}`);
  }

  restoreEpisode(episodeId: Id): Promise<Schemas["Episode"]> {
    return this.json("POST", `/v1/episodes/${segment(episodeId)}/restore`);
  }

  /** Remove a soft-deleted episode for good. */
  async purgeEpisode(episodeId: Id): Promise<void> {
    await this.send("POST", `/v1/episodes/${segment(episodeId)}/purge`);
  }

  /** Ask the agent's model for a procedure learned from the episode; it waits for approval. */
  proposeProcedure(episodeId: Id): Promise<Schemas["Procedure"]> {
    return this.json("POST", `/v1/episodes/${segment(episodeId)}/procedures/propose`);
  }

  // Search and recall

  /** Full-text search over messages, ranked by BM25. */
  searchMessages(query: {
    q: string;
    agent_id?: Id;
    user_id?: string;
    conversation_id?: Id;
    from?: string;
    to?: string;
    limit?: number;
  }): Promise<Schemas["MessageHit"][]> {
    return this.items("/v1/messages/search", query);
  }

  /** What the agent remembers of a user, by meaning and by words. */
  async recall(agentId: Id, body: Schemas["RecallQuery"]): Promise<Schemas["RecallHit"][]> {
    const page = await this.json<{ items: Schemas["RecallHit"][] }>(
      "POST",
      `/v1/agents/${segment(agentId)}/recall`,
      { body },
    );
    return page.items;
  }

  // Knowledge

  knowledgeInfo(agentId: Id): Promise<Schemas["KnowledgeInfo"]> {
    return this.json("GET", `/v1/agents/${segment(agentId)}/knowledge`);
  }

  /** Chunk, embed and store a document; a source ingested again replaces its chunks. */
  ingestDocument(agentId: Id, body: Schemas["IngestRequest"]): Promise<Schemas["IngestResponse"]> {
    return this.json("POST", `/v1/agents/${segment(agentId)}/knowledge/documents`, { body });
  }

  listDocuments(agentId: Id, query: { limit?: number; offset?: number } = {}): Promise<Schemas["DocumentSummary"][]> {
    return this.items(`/v1/agents/${segment(agentId)}/knowledge/documents`, query);
  }

  readDocument(agentId: Id, query: { source: string }): Promise<Schemas["Document"]> {
    return this.json("GET", `/v1/agents/${segment(agentId)}/knowledge/document`, { query });
  }

  /** Search by meaning, by words, or both (`mode`), each hit with its scores. */
  async searchKnowledge(agentId: Id, body: Schemas["KnowledgeSearchRequest"]): Promise<Schemas["KnowledgeHit"][]> {
    const page = await this.json<{ items: Schemas["KnowledgeHit"][] }>(
      "POST",
      `/v1/agents/${segment(agentId)}/knowledge/search`,
      { body },
    );
    return page.items;
  }

  async deleteChunk(agentId: Id, chunkId: Id): Promise<void> {
    await this.send("DELETE", `/v1/agents/${segment(agentId)}/knowledge/chunks/${segment(chunkId)}`);
  }

  // Procedures

  listProcedures(
    query: {
      agent_id?: Id;
      shared?: boolean;
      active?: boolean;
      approved?: boolean;
      text?: string;
      limit?: number;
      offset?: number;
    } = {},
  ): Promise<Schemas["Procedure"][]> {
    return this.items("/v1/procedures", query);
  }

  /** A new procedure; its first version waits for approval. */
  createProcedure(body: Schemas["ProcedureSpec"]): Promise<Schemas["Procedure"]> {
    return this.json("POST", "/v1/procedures", { body });
  }

  getProcedure(procedureId: Id): Promise<Schemas["Procedure"]> {
    return this.json("GET", `/v1/procedures/${segment(procedureId)}`);
  }

  /** A JSON merge patch; a change of its steps or trigger is a new version, pending approval. */
  updateProcedure(procedureId: Id, patch: JsonObject): Promise<Schemas["Procedure"]> {
    return this.json("PATCH", `/v1/procedures/${segment(procedureId)}`, { body: patch });
  }

  async deleteProcedure(procedureId: Id): Promise<void> {
    await this.send("DELETE", `/v1/procedures/${segment(procedureId)}`);
  }

  /** Approve the pending version: from now on it is the one served. */
  approveProcedure(procedureId: Id): Promise<Schemas["Procedure"]> {
    return this.json("POST", `/v1/procedures/${segment(procedureId)}/approve`);
  }

  rejectProcedure(procedureId: Id): Promise<Schemas["Procedure"]> {
    return this.json("POST", `/v1/procedures/${segment(procedureId)}/reject`);
  }

  /** Serve an earlier approved version again. */
  rollbackProcedure(procedureId: Id, body: Schemas["RollbackRequest"]): Promise<Schemas["Procedure"]> {
    return this.json("POST", `/v1/procedures/${segment(procedureId)}/rollback`, { body });
  }

  procedureVersions(procedureId: Id): Promise<Schemas["ProcedureVersion"][]> {
    return this.items(`/v1/procedures/${segment(procedureId)}/versions`);
  }

  // Dumps

  /** The tenant's data (or one user's), as a dump: JSON Lines. */
  async exportDump(query: { user_id?: string } = {}): Promise<string> {
    return (await this.send("GET", "/v1/export", { query })).text();
  }

  /** Import a dump whole, or nothing of it. */
  importDump(dump: string): Promise<Schemas["DumpImported"]> {
    return this.json("POST", "/v1/import", { text: dump, headers: { "content-type": "application/x-ndjson" } });
  }

  // The OpenAI-compatible door (the `openai` package speaks it in full, streams included)

  /** The tenant's active agents, as OpenAI `model` objects. */
  listModels(): Promise<{ object: "list"; data: { id: string; object: "model"; owned_by: string }[] }> {
    return this.json("GET", "/v1/models");
  }

  /** A whole `chat.completion` from an agent (`model` names it). */
  chatCompletion(
    body: Schemas["ChatCompletionRequest"],
    headers: { user?: string; conversationId?: Id } = {},
  ): Promise<JsonObject> {
    if (body.stream) throw new TypeError("chatCompletion answers whole; stream with the `openai` package");
    const sent: Record<string, string> = {};
    if (headers.user !== undefined) sent["x-octopus-user"] = headers.user;
    if (headers.conversationId !== undefined) sent["x-octopus-conversation"] = headers.conversationId;
    return this.json("POST", "/v1/chat/completions", { body, headers: sent });
  }
}

async function errorOf(response: Response): Promise<OctopusError> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the text is kept as the body.
  }
  return OctopusError.fromBody(response.status, body, text.slice(0, 500));
}

/** The events of a turn's server-sent event stream; an `error` event throws. */
export async function* turnEvents(stream: ReadableStream<Uint8Array>): AsyncGenerator<TurnEvent> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let name = "message";
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, end).replace(/\r$/, "");
      buffered = buffered.slice(end + 1);
      if (line.startsWith(":")) continue;
      if (line !== "") {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") name = text;
        else if (field === "data") data.push(text);
        continue;
      }
      if (data.length > 0) {
        const event = turnEvent(name, data.join("\n"));
        if (event) yield event;
      }
      name = "message";
      data = [];
    }
  }
}

function turnEvent(name: string, data: string): TurnEvent | undefined {
  const payload = JSON.parse(data);
  if (name === "delta") return { type: "delta", text: payload.text };
  if (name === "done") return { type: "done", reply: payload as Schemas["TurnReply"] };
  if (name === "error") throw OctopusError.fromBody(Number(payload.status ?? 0), payload, data.slice(0, 500));
  return undefined;
}
