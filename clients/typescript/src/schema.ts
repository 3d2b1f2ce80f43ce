export interface paths {
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process is up: `/healthz` under the name other servers use. */
        get: operations["health"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process is up. */
        get: operations["healthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics: requests by route and status with latency histograms,
         *     open connections, each tenant's waiting memory work and the age of its
         *     oldest job, and embedding throughput. Needs the admin key: the per-tenant
         *     series name every tenant.
         */
        get: operations["metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The store answers queries. */
        get: operations["readyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the tenant's active agents. */
        get: operations["list_agents"];
        put?: never;
        /** Create an agent. */
        post: operations["create_agent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get an agent (inactive ones too). */
        get: operations["get_agent"];
        put?: never;
        post?: never;
        /**
         * Delete an agent: it, its knowledge and its recall answer 404 from now on,
         *     and its name is free. Its conversations and episodes stay readable until
         *     deleted themselves. To pause an agent (read-only) instead, `PATCH` it with
         *     `{"is_active": false}`.
         */
        delete: operations["delete_agent"];
        options?: never;
        head?: never;
        /**
         * Change an agent with a JSON merge patch (RFC 7386) of `name`, `system_prompt`,
         *     `llm`, `memory` or `is_active`.
         */
        patch: operations["update_agent"];
        trace?: never;
    };
    "/v1/agents/{agent_id}/knowledge": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The agent's knowledge collection: name, dimension, model, chunk count. */
        get: operations["knowledge_info"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/knowledge/chunks/{chunk_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete one chunk of the agent's knowledge. */
        delete: operations["delete_chunk"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/knowledge/document": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One document: its chunks in order, and their text joined. */
        get: operations["read_document"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/knowledge/documents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The agent's documents, by source name: category, chunk count and when
         *     the newest chunk was indexed.
         */
        get: operations["list_documents"];
        put?: never;
        /** Ingest a document into the agent's knowledge: chunked, embedded, stored. */
        post: operations["ingest_document"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/knowledge/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Search the agent's knowledge by meaning and by words (`mode`), with every score. */
        post: operations["search_knowledge"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/recall": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Recall what the agent remembers of a user: past messages and episode
         *     summaries, by meaning and by words, each with its episode, time and scores.
         */
        post: operations["recall"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The users who have a live conversation with the agent, by user id: how
         *     many conversations each has and when the newest last changed.
         */
        get: operations["list_users"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/users/{user_id}/facts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The facts the agent learned about a user: each with the episode and
         *     messages it came from, when it became true (`valid_from`) and, once a
         *     newer fact replaced it, until when (`valid_to`, `superseded_by`). Facts
         *     are learned during a session and when an episode closes, by the agent's
         *     model, or added by a person; a user's standing instructions and
         *     preferences are filed as the memory worker reads their messages. The
         *     newest first.
         */
        get: operations["list_facts"];
        put?: never;
        /**
         * Add a fact about a user by hand: of no episode or message,
         *     `source: manual`, `changed_by` the key's name. It is in the next context
         *     and found by its words at once, and by meaning once the memory worker
         *     embedded it; it is corrected, deleted and forgotten as a learned fact is.
         *     A `key` of the client's names it for reading back (`?key=`): while a
         *     fact with the key holds in the category, another is refused (409
         *     `fact_key_taken`); correct that one instead.
         */
        post: operations["add_fact"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/users/{user_id}/profile": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * What holds about a user now, in one view: their standing instructions and
         *     preferences, every other current fact by category with when it became
         *     true, the newest past conversations' summaries a line each, and how
         *     much they have talked. Assembled from what is stored when asked, so a
         *     corrected fact shows its new text and a deleted one is gone at once.
         *     `404 user_not_found` when the agent has no live conversation and no
         *     fact of the user (a forgotten user among them).
         */
        get: operations["user_profile"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/chat/completions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Complete a chat as the agent `model` names, with its memory: the new
         *     user message (or tool results) stored, the working memory assembled
         *     around it, the agent's model called, the reply stored and returned in
         *     OpenAI's shape, with what memory was used in `octopus.trace`. The answer's
         *     `x-octopus-conversation` header names the conversation used.
         */
        post: operations["chat_completion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List conversations, newest first. */
        get: operations["list_conversations"];
        put?: never;
        /** Start a conversation between a user and an agent. */
        post: operations["create_conversation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations/import": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Import past conversations with their original timestamps: a new
         *     conversation, one closed episode per session. Everything is validated
         *     before anything is stored; embeddings and summaries follow in the
         *     background, as for live messages.
         */
        post: operations["import_conversation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations/import/{format}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Import a person's past conversations from the `conversations.json` of a
         *     ChatGPT or Claude data export, sent as it is. Each conversation becomes
         *     one conversation of the user with the agent, of one closed episode, every
         *     message at its own time: of ChatGPT's message trees, the branch the user
         *     last saw; system and tool messages as such; the words of attached files
         *     where the export holds them. Embeddings, summaries and facts follow in
         *     the background, as for any import. The same conversations imported again
         *     are found and left as they are. The whole file is read before anything
         *     is stored: a file cut short or of another shape is refused, naming the
         *     line or the conversation.
         */
        post: operations["import_chats"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations/{conversation_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a conversation. */
        get: operations["get_conversation"];
        put?: never;
        post?: never;
        /** Delete a conversation: it takes no more messages, and its open episode closes. */
        delete: operations["delete_conversation"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations/{conversation_id}/context": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Assemble the working memory for the user's next message: retrieval for every
         *     block at once, then pruning to the agent's token budget, with a trace.
         */
        post: operations["build_context"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations/{conversation_id}/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Append messages to a conversation, in order, all or none. Opens an episode when
         *     none is open. Give `timestamp` on each message when importing history.
         */
        post: operations["append_messages"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations/{conversation_id}/turns": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Take a turn: store the user's message, assemble the working memory, call
         *     the agent's model with it, store and return the reply with the trace.
         *     When the model calls tools, `tool_calls` lists them: run them and post
         *     their `tool_results` to continue. A failed model call keeps the user's
         *     message and stores nothing else (502 or 503, naming the provider).
         */
        post: operations["take_turn"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/episodes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List episodes, newest first. */
        get: operations["list_episodes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/episodes/{episode_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get an episode with its messages in order. */
        get: operations["get_episode"];
        put?: never;
        post?: never;
        /** Soft-delete an episode: hidden from every read and search until restored or purged. */
        delete: operations["delete_episode"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/episodes/{episode_id}/close": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Close an open episode. */
        post: operations["close_episode"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/episodes/{episode_id}/procedures/propose": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Ask the agent's model to turn this episode's tool calls into a draft
         *     procedure of its agent, stored pending approval (`created_by`:
         *     `learned:{episode}`). A person approves it before it can ever match.
         *     409 `no_tool_calls` for an episode that called no tool; 503 when the
         *     agent has no model to ask.
         */
        post: operations["propose_procedure"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/episodes/{episode_id}/purge": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Remove a soft-deleted or archived episode for good: its messages, their
         *     full-text entries and its memory vectors.
         */
        post: operations["purge_episode"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/episodes/{episode_id}/restore": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Restore a soft-deleted episode, or bring an archived one back into use
         *     (kept for another retention period from now).
         */
        post: operations["restore_episode"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/episodes/{episode_id}/summary": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Set an episode's summary and key facts, replacing any it had. */
        put: operations["set_episode_summary"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/export": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Export the caller's tenant as a dump: JSON Lines, streamed: a header,
         *     the tenant, agents, procedures, knowledge chunks, conversations with their
         *     episodes and messages, and an `end` record counting the lines. A dump cut short has no `end` record, and an
         *     import refuses it.
         */
        get: operations["export_dump"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/facts/{fact_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A fact, by the id of any of its versions: current or replaced. */
        get: operations["get_fact"];
        put?: never;
        post?: never;
        /**
         * Delete a fact, given any of its versions: every version's words leave
         *     the rows, the full-text index, the memory vectors and the vector index,
         *     and the stores' files are compacted, as forgetting a user does. Its
         *     history keeps that it was deleted, by whom and when, and none of its
         *     words. Cannot be undone.
         */
        delete: operations["delete_fact"];
        options?: never;
        head?: never;
        /**
         * Correct a fact that holds: the answer is a new version (a new id,
         *     `source: manual`, `changed_by` the key's name) that replaces it from
         *     `valid_from`; the corrected version is kept with the period it held, as
         *     the model's replacements are. Recall finds the new words by keyword at
         *     once and by meaning once the memory worker has embedded them.
         */
        patch: operations["correct_fact"];
        trace?: never;
    };
    "/v1/facts/{fact_id}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A fact's history, by the id of any of its versions, oldest first: each
         *     version learned, corrected or imported (its words, who, when, why), and
         *     its deletion. Kept after a deletion, without the words.
         */
        get: operations["fact_history"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/import": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Import a dump (JSON Lines) in one transaction: all of it, or on any
         *     error nothing. With the admin key it goes into the dump's own tenant,
         *     created when it does not exist, with its ids: objects that exist
         *     already are a conflict. With a tenant's key it goes into that tenant as
         *     a copy, every object with a new id (`new_ids` maps the agents' and
         *     conversations'); an agent or shared procedure whose name the tenant has
         *     already is renamed, and `new_ids` says to what.
         */
        post: operations["import_dump"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/messages/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Full-text search over the tenant's messages, ranked by BM25. Deleted episodes
         *     are never searched.
         */
        get: operations["search_messages"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/messages/{message_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Erase one message: its row, full-text entry and vector leave every
         *     store, and the stores' files are compacted, as forgetting a user does.
         *     The facts learned from it are deleted with every version (their
         *     histories say by whom); its episode's summary and key facts are
         *     dropped, written again for a closed episode (by the agent's model, or
         *     extractively), and the facts are learned again from the messages left.
         *     Cannot be undone.
         */
        delete: operations["erase_message"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's active agents as models, OpenAI's `list` of `model` objects: each
         *     agent's name is a `model` a completion may name.
         */
        get: operations["list_models"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/procedures": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List procedures, newest first. */
        get: operations["list_procedures"];
        put?: never;
        /**
         * Create a procedure: version 1, pending approval. It matches nothing until
         *     it is approved. Without `agent_id` it is shared by every agent of the tenant.
         */
        post: operations["create_procedure"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/procedures/{procedure_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a procedure: its serving version (or, before any approval, its newest). */
        get: operations["get_procedure"];
        put?: never;
        post?: never;
        /** Delete a procedure and every version of it. */
        delete: operations["delete_procedure"];
        options?: never;
        head?: never;
        /**
         * Change a procedure with a JSON merge patch. New `name`, `description`,
         *     `trigger_pattern` or `steps` make the next version, pending approval; an
         *     approved version keeps serving until then. `is_active` alone makes no
         *     version: `false` deactivates the procedure (it never matches).
         */
        patch: operations["update_procedure"];
        trace?: never;
    };
    "/v1/procedures/{procedure_id}/approve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Approve the pending version: it serves from now on. */
        post: operations["approve_procedure"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/procedures/{procedure_id}/reject": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Reject the pending version: it never serves. */
        post: operations["reject_procedure"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/procedures/{procedure_id}/rollback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Make an earlier approved version serve again. */
        post: operations["rollback_procedure"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/procedures/{procedure_id}/versions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every version of a procedure, oldest first, with who wrote and who
         *     decided each.
         */
        get: operations["procedure_versions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The server's version and backends, the embedding model, and the caller's
         *     memory queue: with a tenant's key its tenant's, with the admin key every
         *     tenant's together. With `agent_id`, whether that agent's model can be
         *     called.
         */
        get: operations["status"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List tenants. */
        get: operations["list_tenants"];
        put?: never;
        /** Create a tenant. */
        post: operations["create_tenant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a tenant. */
        get: operations["get_tenant"];
        put?: never;
        post?: never;
        /**
         * Delete a tenant and everything under it: its API keys, agents,
         *     conversations, episodes, messages, facts, procedures, knowledge, memory
         *     vectors, queued work, webhooks and their deliveries, with their full-text
         *     entries and their copies in the vector index; then compact the stores'
         *     files. The receipt counts what each store removed. Cannot be undone.
         */
        delete: operations["delete_tenant"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant_id}/export": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Export a tenant as a dump (admin key). */
        get: operations["export_tenant_dump"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant_id}/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a tenant's API keys (without their secrets). */
        get: operations["list_api_keys"];
        put?: never;
        /** Create an API key for a tenant. The response is the only time its secret is shown. */
        post: operations["create_api_key"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant_id}/keys/{key_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke an API key. */
        delete: operations["revoke_api_key"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{user_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Forget a user: remove every conversation, episode, message, summary, key
         *     fact, memory vector, full-text entry, queued job and cached history about
         *     them, and procedures learned from their episodes; then compact the stores'
         *     files. The receipt counts what each store removed. Cannot be undone.
         */
        delete: operations["forget_user"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the tenant's endpoints, oldest first. */
        get: operations["list_webhooks"];
        put?: never;
        /**
         * Register an endpoint for events: `fact.added`, `fact.updated`,
         *     `fact.deleted`, `message.erased`, `episode.closed`, `procedure.pending`,
         *     `user.forgotten`. The answer holds the signing secret, shown this once.
         *     Events carry ids, never the words of a message or a fact.
         */
        post: operations["create_webhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get an endpoint: whether it is enabled, failing, or disabled and why. */
        get: operations["get_webhook"];
        put?: never;
        post?: never;
        /** Delete an endpoint and its delivery log: nothing more is sent to it. */
        delete: operations["delete_webhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The endpoint's delivery log, newest first: each event's state
         *     (pending, delivered, failed), attempts, last status and error.
         */
        get: operations["list_deliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}/enable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Enable an endpoint that was disabled (it answered 410 Gone, or failed
         *     for too long): events written from now on are delivered to it; those
         *     given up stay given up.
         */
        post: operations["enable_webhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Agent: {
            /** Format: date-time */
            created_at: string;
            id: components["schemas"]["AgentId"];
            /** @description Inactive agents are hidden from lists and take no new conversations. */
            is_active: boolean;
            llm: components["schemas"]["LlmConfig"];
            memory: components["schemas"]["MemoryConfig"];
            name: string;
            system_prompt: string;
            /** Format: date-time */
            updated_at: string;
        };
        /**
         * Format: uuid
         * @description An agent: a configured assistant with its own memory.
         */
        AgentId: string;
        /** @description The fields a caller gives to create an agent. */
        AgentSpec: {
            llm: components["schemas"]["LlmConfig"];
            memory?: components["schemas"]["MemoryConfig"];
            name: string;
            system_prompt?: string;
        };
        /** @description An agent's model, as far as the server can tell without calling it. */
        AgentStatus: {
            id: components["schemas"]["AgentId"];
            /** @description `provider/model` of the model that writes summaries and learns facts. */
            model: string;
            /**
             * @description Whether that model can be called as the server is set up. Without
             *     it, messages are stored, embedded and recalled, but episodes get
             *     their opening lines as summaries and no fact is learned.
             */
            model_callable: boolean;
            name: string;
            /**
             * @description Why it cannot be (no key for the provider, a base URL the operator's
             *     rules forbid).
             */
            problem?: string | null;
        };
        /** @description An API key as stored: its hash, never its secret. */
        ApiKey: {
            /** Format: date-time */
            created_at: string;
            id: components["schemas"]["ApiKeyId"];
            name: string;
            /** @description The first characters of the secret, so that a person can tell keys apart. */
            prefix: string;
            /** Format: date-time */
            revoked_at?: string | null;
            tenant_id: components["schemas"]["TenantId"];
        };
        /**
         * Format: uuid
         * @description An API key's public id (the secret itself is never stored).
         */
        ApiKeyId: string;
        /**
         * @description What an append takes: a batch of messages, or one message by itself
         *     (without the `messages` wrapper).
         */
        AppendBody: components["schemas"]["AppendMessagesRequest"] | components["schemas"]["NewMessage"];
        /** @description A batch of messages. */
        AppendMessagesRequest: {
            messages: components["schemas"]["NewMessage"][];
        };
        AppendedMessages: {
            /** @description The stored messages, with their ids, episodes and ordinals. */
            messages: components["schemas"]["Message"][];
        };
        /**
         * @description The blocks of a context, in order.
         * @enum {string}
         */
        Block: "system_prompt" | "procedures" | "profile" | "facts" | "knowledge" | "episodic" | "history" | "user_message";
        BlockTokens: {
            block: components["schemas"]["Block"];
            /** @description Items kept: messages of history, chunks, snippets. */
            items: number;
            /** @description Tokens of the block's messages, overhead included. */
            tokens: number;
        };
        CacheCounts: {
            histories: number;
        };
        /**
         * @description What became of a candidate.
         * @enum {string}
         */
        CandidateFate: "kept" | "joined" | "repeat" | "no_text" | "block_limit" | "over_budget";
        /**
         * @description A chat completion request in OpenAI's shape. Fields not listed are
         *     accepted and ignored.
         */
        ChatCompletionRequest: {
            /** @description The conversation as the client holds it; only its end is new. */
            messages: components["schemas"]["ChatMessage"][];
            /** @description The agent: its name, or its id. */
            model: string;
            /**
             * @description Answer with `chat.completion.chunk` server-sent events, ending with
             *     `data: [DONE]`.
             */
            stream?: boolean;
            stream_options?: components["schemas"]["StreamOptions"] | null;
            /** @description Tools the model may call. */
            tools?: components["schemas"]["ChatTool"][];
            /** @description The user; or send the `x-octopus-user` header. */
            user?: string | null;
        };
        /** @description Text, or a list of parts of which only text parts are understood. */
        ChatContent: string | components["schemas"]["ChatContentPart"][];
        ChatContentPart: {
            text?: string | null;
            type: string;
        };
        /**
         * @description One message of the client's list. An assistant's `tool_calls` are
         *     accepted and not read: Octopus stored them when the model made them.
         */
        ChatMessage: {
            content?: components["schemas"]["ChatContent"] | null;
            role: components["schemas"]["ChatRole"];
            /** @description For a tool's result: the call it answers. */
            tool_call_id?: string | null;
        };
        /** @enum {string} */
        ChatRole: "system" | "developer" | "user" | "assistant" | "tool";
        /** @description A tool, in OpenAI's shape. */
        ChatTool: {
            function: components["schemas"]["ToolSpec"];
            /** @description Always `function`. */
            type: string;
        };
        /** @description What an import of an export did. */
        ChatsImported: {
            /**
             * @description How many an earlier import of the same conversations stored; they are
             *     left as they are.
             */
            already_imported: number;
            /**
             * @description Each conversation of the export with something said in it, in the
             *     export's order.
             */
            conversations: components["schemas"]["ImportedChat"][];
            /** @description Conversations of the export with nothing said in them, not stored. */
            empty: number;
            /** @description How many of them this import stored. */
            imported: number;
            /** @description Messages this import stored. */
            messages: number;
        };
        /** @description A stored chunk, without its vector. */
        Chunk: components["schemas"]["ChunkMetadata"] & {
            agent_id: components["schemas"]["AgentId"];
            content: string;
            /** Format: uuid */
            id: string;
        };
        /** @description Where a chunk came from: its document, section and category. */
        ChunkMetadata: {
            /** @description e.g. "policy", "manual", "faq". */
            category?: string | null;
            /** @description Position of the chunk in its source, from 0. */
            chunk_index: number;
            /** @description The Markdown headings above the chunk, outermost first, joined by " > ". */
            heading?: string | null;
            /** Format: date-time */
            indexed_at: string;
            /** @description The source document's name, e.g. a file path. */
            source: string;
        };
        CloseEpisodeRequest: {
            end_reason: components["schemas"]["EndReason"];
            /**
             * Format: date-time
             * @description When the episode ended; now when absent.
             */
            ended_at?: string | null;
            key_facts?: string[];
            /** @description A summary written by the caller; Octopus writes one otherwise. */
            summary?: string | null;
        };
        /**
         * @description A collection's fixed properties: every vector in it has `dimension` floats
         *     from `model`.
         */
        Collection: {
            agent_id: components["schemas"]["AgentId"];
            chunk_count: number;
            /** Format: date-time */
            created_at: string;
            dimension: number;
            model: string;
            name: string;
        };
        /** @description One part of a multi-part content. */
        ContentPart: {
            text: string;
            /** @enum {string} */
            type: "text";
        } | {
            image_url: components["schemas"]["ImageUrl"];
            /** @enum {string} */
            type: "image_url";
        } | {
            input_audio: components["schemas"]["InputAudio"];
            /** @enum {string} */
            type: "input_audio";
        } | {
            file: components["schemas"]["FileRef"];
            /** @enum {string} */
            type: "file";
        };
        /** @description One candidate and what became of it. */
        ContextCandidate: {
            block: components["schemas"]["Block"];
            fate: components["schemas"]["CandidateFate"];
            /**
             * @description The id the trace names it by: a procedure's, a fact's, a chunk's, a
             *     message's, an episode's.
             */
            id: string;
            /** @description Whether its words are in the context. */
            kept: boolean;
            recall?: components["schemas"]["RecallExplanation"] | null;
            /**
             * @description The personal data replaced in what went out (the agent's `pii`
             *     policy redacts outgoing text), by kind.
             */
            redacted?: components["schemas"]["PiiKind"][];
            /**
             * Format: double
             * @description Its score as the pruning compared it (each block's best 1); absent
             *     for a recalled memory that was not an item of its own.
             */
            score?: number | null;
            /** @description For a recalled memory shown with another: the id of the passage. */
            shown_in?: string | null;
        };
        /** @description Why the context holds what it holds. */
        ContextExplanation: {
            /**
             * @description Every candidate offered, block by block in the context's order,
             *     each block's in the order offered (recalled memories best first).
             */
            candidates: components["schemas"]["ContextCandidate"][];
        };
        ContextRequest: {
            /**
             * @description Also say why each candidate was kept or left out, and why recall
             *     found each memory where it did (`explanation`). Off, none of that
             *     work is done.
             */
            explain?: boolean;
            /** @description The user's new message. It is not stored: append it as usual. */
            message: string;
        };
        ContextResponse: {
            episode_id?: components["schemas"]["EpisodeId"] | null;
            explanation?: components["schemas"]["ContextExplanation"] | null;
            /**
             * @description Ready for any chat-completions API: system prompt, retrieved knowledge,
             *     episodic snippets, history, and the user's message.
             */
            messages: components["schemas"]["ChatMessage"][];
            tokenizer: string;
            /** @description What was retrieved with its scores, what was pruned, tokens per block. */
            trace: components["schemas"]["ContextTrace"];
        };
        /** @description How a context came to be what it is. */
        ContextTrace: {
            blocks: components["schemas"]["BlockTokens"][];
            budget: number;
            episodic: components["schemas"]["Retrieved"][];
            /** @description Every fact, knowledge chunk and episodic snippet offered, kept or not. */
            facts?: components["schemas"]["Retrieved"][];
            knowledge: components["schemas"]["Retrieved"][];
            /** @description The procedures that matched the message, and why (kept or pruned). */
            procedures?: components["schemas"]["ProcedureMatch"][];
            /** @description The profile's lines offered, kept or not. */
            profile?: components["schemas"]["Retrieved"][];
            /** @description In the order they were dropped. */
            pruned: components["schemas"]["Pruned"][];
            /** @description Tokens of the whole prompt, reply priming included. */
            total_tokens: number;
            /**
             * @description Set when the vector backend could not be reached (a Qdrant server
             *     down, say): knowledge and memories were then found by their words
             *     alone. Says which service, and why.
             */
            vector_search_unavailable?: string | null;
        };
        Conversation: {
            agent_id: components["schemas"]["AgentId"];
            /** Format: date-time */
            created_at: string;
            /**
             * Format: date-time
             * @description A deleted conversation takes no new messages.
             */
            deleted_at?: string | null;
            id: components["schemas"]["ConversationId"];
            metadata: Record<string, never>;
            /**
             * @description The first words the user said in it (of its first user message, the
             *     redacted copy when there is one), for naming it in a list: at most
             *     [`OPENING_CHARS`] characters, cut at a word. Absent until the user
             *     has said something, and in dumps.
             */
            opening?: string | null;
            title?: string | null;
            /** Format: date-time */
            updated_at: string;
            /** @description The caller's own id for the user: an opaque string. */
            user_id: string;
        };
        /**
         * Format: uuid
         * @description A conversation: the long-lived thread between one user and one agent.
         */
        ConversationId: string;
        /**
         * @description Past conversations brought in with their original timestamps: one
         *     conversation, one episode per session.
         */
        ConversationImport: {
            agent_id: components["schemas"]["AgentId"];
            metadata?: Record<string, never>;
            sessions: components["schemas"]["ImportedSession"][];
            title?: string | null;
            user_id: string;
        };
        /** @description The fields a caller gives to start a conversation. */
        ConversationSpec: {
            agent_id: components["schemas"]["AgentId"];
            metadata?: Record<string, never>;
            title?: string | null;
            user_id: string;
        };
        CreateApiKey: {
            name: string;
        };
        CreateTenant: {
            name: string;
        };
        /** @description A new key. `key` is the secret: it is shown only in this response. */
        CreatedApiKey: components["schemas"]["ApiKey"] & {
            key: string;
        };
        /** @description An endpoint just registered, with its signing secret: shown this once. */
        CreatedWebhook: {
            /**
             * @description `whsec_` and the base64 of a 32-byte key. Verify each delivery's
             *     `webhook-signature` with it, as the Standard Webhooks libraries do.
             */
            secret: string;
            webhook: components["schemas"]["WebhookInfo"];
        };
        /** @description One event for one endpoint, as the delivery log shows it. */
        Delivery: {
            attempts: number;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            delivered_at?: string | null;
            event_type: components["schemas"]["EventType"];
            /** Format: date-time */
            last_attempt_at?: string | null;
            /** @description Why the last attempt failed. */
            last_error?: string | null;
            /** @description The HTTP status of the last attempt; none when it got no answer. */
            last_status?: number | null;
            /** @description The `webhook-id` header of every attempt: `msg_` and the event's id. */
            message_id: string;
            /**
             * Format: date-time
             * @description When the next attempt is due, while pending.
             */
            next_attempt_at?: string | null;
            state: components["schemas"]["DeliveryState"];
            user_id?: string | null;
            webhook_id: components["schemas"]["WebhookId"];
        };
        /**
         * @description Where a delivery stands.
         * @enum {string}
         */
        DeliveryState: "pending" | "delivered" | "failed";
        /** @description One document of the agent's knowledge. */
        Document: {
            chunks: components["schemas"]["Chunk"][];
            source: string;
            /** @description The chunks' text, in order, separated by blank lines. */
            text: string;
        };
        /** @enum {string} */
        DocumentFormat: "markdown" | "text";
        /** @description One document of a collection: the chunks ingested from one source. */
        DocumentSummary: {
            category?: string | null;
            chunk_count: number;
            /**
             * Format: date-time
             * @description When its newest chunk was indexed.
             */
            indexed_at: string;
            source: string;
        };
        /** @description What an import stored. */
        DumpImported: components["schemas"]["ImportCounts"] & {
            new_ids?: components["schemas"]["NewIds"] | null;
            /** @description The tenant the dump went into. */
            tenant_id: components["schemas"]["TenantId"];
        };
        /**
         * @description The embedding model. It loads at the first text to embed: until then,
         *     its fields are empty.
         */
        EmbeddingStatus: {
            dimensions?: number | null;
            model?: string | null;
            /**
             * @description The local model's number format (`f32`, `bf16`, `int8`), chosen by
             *     timing each at load (`precision = "auto"`) or by the setting; none for
             *     a remote provider.
             */
            precision?: string | null;
        };
        /**
         * @description Why an episode ended.
         * @enum {string}
         */
        EndReason: "user_closed" | "agent_closed" | "timeout" | "imported";
        Episode: {
            agent_id: components["schemas"]["AgentId"];
            /**
             * Format: date-time
             * @description Set when the retention job archived the episode (its agent's
             *     `retention_days` after it closed): it leaves recall, search and context,
             *     and can still be read, restored or purged.
             */
            archived_at?: string | null;
            conversation_id: components["schemas"]["ConversationId"];
            /** Format: date-time */
            created_at: string;
            /**
             * Format: date-time
             * @description Soft-deleted episodes are hidden from every read until restored or purged.
             */
            deleted_at?: string | null;
            end_reason?: components["schemas"]["EndReason"] | null;
            /**
             * Format: date-time
             * @description Set when the episode closes.
             */
            ended_at?: string | null;
            /**
             * @description How many of its messages (the first ones, by ordinal) facts have
             *     been learned from: during the session every
             *     `memory.learn_every_messages` user messages, and at close.
             */
            facts_learned_through?: number;
            id: components["schemas"]["EpisodeId"];
            /** @description Facts worth remembering, named by the summary written at close. */
            key_facts: string[];
            /**
             * Format: date-time
             * @description The timestamp of its latest message.
             */
            last_message_at: string;
            message_count: number;
            /**
             * Format: date-time
             * @description The timestamp of its first message.
             */
            started_at: string;
            /** @description A short summary written at close. */
            summary?: string | null;
            summary_source?: components["schemas"]["SummarySource"] | null;
            /** @description Tokens of the messages the model read (user, system, tool). */
            total_input_tokens: number;
            /** @description Tokens of the messages the model wrote (assistant). */
            total_output_tokens: number;
            /** Format: date-time */
            updated_at: string;
            user_id: string;
        };
        /**
         * Format: uuid
         * @description An episode: one session of a conversation, from its first message to its close.
         */
        EpisodeId: string;
        /** @description A past conversation in a line. */
        EpisodeLine: {
            conversation_id: components["schemas"]["ConversationId"];
            episode_id: components["schemas"]["EpisodeId"];
            /** Format: date-time */
            started_at: string;
            /** @description The first sentence of its summary. */
            summary: string;
        };
        EpisodeSummaryRequest: {
            key_facts?: string[];
            summary: string;
        };
        /** @description An episode and its messages in order. */
        EpisodeWithMessages: components["schemas"]["Episode"] & {
            messages: components["schemas"]["Message"][];
        };
        /** @description The body of every error response. */
        ErrorBody: {
            error: components["schemas"]["ErrorDetail"];
        };
        ErrorDetail: {
            /** @description Stable, machine-readable: `invalid_request`, `agent_not_found`, … */
            code: string;
            fault?: components["schemas"]["Fault"] | null;
            /** @description The offending field's path, e.g. `messages[2].role`. */
            field?: string | null;
            message: string;
            /** @description The agent's model provider, when the failure is its (`llm_*` codes). */
            provider?: string | null;
        };
        /**
         * @description What happened. The names are those the API and the payloads use.
         * @enum {string}
         */
        EventType: "fact.added" | "fact.updated" | "fact.deleted" | "message.erased" | "episode.closed" | "procedure.pending" | "user.forgotten";
        /**
         * @description The `conversations.json` of a data export, as the service wrote it: an
         *     array of conversations (one conversation alone is read as an array of one).
         */
        ExportFile: Record<string, never>[];
        /** @description A fact about a user, as stored. */
        Fact: {
            agent_id: components["schemas"]["AgentId"];
            /**
             * @description The category it is filed under: one of the agent's
             *     `memory.fact_categories`, or `instruction` or `preference` for a
             *     user's standing request; absent when none applies.
             */
            category?: string | null;
            /**
             * @description Who wrote this version: `model` for one the model learned,
             *     `patterns` for a standing request recognised in the user's words,
             *     else the name of the API key that made the change.
             */
            changed_by?: string;
            /** Format: date-time */
            created_at: string;
            episode_id?: components["schemas"]["EpisodeId"] | null;
            id: components["schemas"]["FactId"];
            /**
             * @description The name the client gave a fact it added, by which it reads and
             *     writes it again (a framework's store keys its items so): unique among
             *     the user's facts that hold in the same category, and kept by the
             *     versions that correct it.
             */
            key?: string | null;
            /** @description The messages it was learned from. */
            message_ids: components["schemas"]["MessageId"][];
            /** @description Whether the model learned it or a person wrote it. */
            source?: components["schemas"]["FactSource"];
            superseded_by?: components["schemas"]["FactId"] | null;
            tenant_id: components["schemas"]["TenantId"];
            text: string;
            user_id: string;
            /**
             * Format: date-time
             * @description When it became true: the time of the messages it came from.
             */
            valid_from: string;
            /**
             * Format: date-time
             * @description When a newer fact replaced it; absent while it holds.
             */
            valid_to?: string | null;
        };
        /**
         * @description What happened to a fact.
         * @enum {string}
         */
        FactAction: "learned" | "added" | "corrected" | "imported" | "deleted";
        /** @description What deleting a fact removed. */
        FactDeletionReceipt: {
            /**
             * @description No removed word is left on disk now. When false, a reader (an export,
             *     a backup) holds back the last step, and the words leave the files'
             *     logs as soon as it ends, without delaying anyone's writes.
             */
            compacted: boolean;
            /** @description The fact's first version: its history is read by any version's id. */
            fact_id: components["schemas"]["FactId"];
            /** @description Their memory vectors removed, in the store and its vector index. */
            vectors: number;
            /** @description Its versions removed, the current one and those it replaced. */
            versions: number;
        };
        /** @description What a person writes to correct a fact. */
        FactEdit: {
            /** @description Why, up to 500 characters; kept in the fact's history. */
            reason?: string | null;
            /** @description The fact as it should read, 1 to 2,000 characters. */
            text: string;
            /**
             * Format: date-time
             * @description Since when the corrected words hold; now when absent.
             */
            valid_from?: string | null;
        };
        /** @description The facts of one category, the newest first. */
        FactGroup: {
            /** @description Absent for the facts filed under none. */
            category?: string | null;
            facts: components["schemas"]["ProfileFact"][];
        };
        /** @description One change in a fact's history, oldest first. */
        FactHistoryEntry: {
            action: components["schemas"]["FactAction"];
            /** Format: date-time */
            at: string;
            /** @description `model`, or the name of the API key that made the change. */
            changed_by: string;
            /** @description The version the change wrote (for a deletion, the version that held). */
            fact_id: components["schemas"]["FactId"];
            /** @description Why, when the person said; absent once the fact was deleted. */
            reason?: string | null;
            /** @description The version's words; absent once the fact was deleted. */
            text?: string | null;
        };
        /**
         * Format: uuid
         * @description A fact learned about a user: a memory item of its own, with the period
         *     it held true.
         */
        FactId: string;
        /**
         * @description Where a fact's words came from.
         * @enum {string}
         */
        FactSource: "learned" | "manual";
        /**
         * @description Whose fault a failed call is, which decides what a caller can do about it.
         * @enum {string}
         */
        Fault: "configuration" | "request" | "busy" | "provider";
        FileRef: {
            file_data?: string | null;
            file_id?: string | null;
            filename?: string | null;
        };
        /** @description What forgetting a user removed, counted per store. */
        ForgetReceipt: {
            agent_id?: components["schemas"]["AgentId"] | null;
            /** @description Conversation histories held in this server's memory. */
            cache: components["schemas"]["CacheCounts"];
            /**
             * @description No removed text is left in the data directory now. When false, a
             *     reader (an export, a backup) holds back the last step, and the words
             *     leave the files' logs as soon as it ends, without delaying writes.
             */
            compacted: boolean;
            /** @description Entries of the full-text index over messages. */
            full_text: components["schemas"]["FullTextCounts"];
            /** @description Memory work queued for the removed messages and episodes. */
            queue: components["schemas"]["QueueCounts"];
            /** @description Rows of the relational store. */
            relational: components["schemas"]["RelationalCounts"];
            user_id: string;
            /** @description Memory vectors, and the vector-index graphs rebuilt without them. */
            vectors: components["schemas"]["VectorCounts"];
        };
        FullTextCounts: {
            entries: number;
        };
        /**
         * @description How recall combines its retrievers' lists (`[recall] fusion`).
         * @enum {string}
         */
        Fusion: "scores" | "standardised" | "ranks";
        ImageUrl: {
            detail?: string | null;
            url: string;
        };
        /** @description What an import stored, by kind. */
        ImportCounts: {
            agents: number;
            conversations: number;
            episodes: number;
            facts?: number;
            knowledge_chunks: number;
            messages: number;
            procedures: number;
            /**
             * @description Vectors (of chunks and procedure versions) embedded again because the
             *     dump's model is not this server's.
             */
            vectors_embedded_again: number;
        };
        ImportResponse: {
            conversation: components["schemas"]["Conversation"];
            /** @description One episode per imported session, in order. */
            episodes: components["schemas"]["EpisodeId"][];
            messages: number;
        };
        /**
         * @description Whether this import stored the conversation.
         * @enum {string}
         */
        ImportStatus: "imported" | "already_imported";
        /** @description One conversation of the export, and the conversation it is in Octopus. */
        ImportedChat: {
            conversation_id: components["schemas"]["ConversationId"];
            /** @description The export's own id of the conversation. */
            export_id: string;
            /** @description Its place in the export's array. */
            index: number;
            /** @description Messages this import stored of it. */
            messages: number;
            status: components["schemas"]["ImportStatus"];
            title?: string | null;
        };
        /** @description A message as a caller sends it. */
        ImportedMessage: {
            agent_id?: components["schemas"]["AgentId"] | null;
            contains_pii?: boolean;
            content?: components["schemas"]["MessageContent"] | null;
            /** @description The OpenAI `name` of the participant. */
            name?: string | null;
            redacted_content?: string | null;
            role: components["schemas"]["Role"];
            /** Format: date-time */
            timestamp: string;
            /** @description Computed by Octopus when absent. */
            token_count?: number | null;
            /** @description For a `tool` message in the OpenAI shape: the call it answers. */
            tool_call_id?: string | null;
            tool_calls?: components["schemas"]["ToolCallRecord"][];
        } & (({
            content: unknown;
        } | {
            tool_calls: unknown;
        }) & unknown & unknown & unknown);
        ImportedSession: {
            /** @description In order; each with its original `timestamp`. */
            messages: components["schemas"]["ImportedMessage"][];
        };
        IngestRequest: {
            /** @description e.g. "policy", "manual", "faq". */
            category?: string | null;
            format?: components["schemas"]["DocumentFormat"] | null;
            /**
             * @description Names the document (a path, a URL). Ingesting the same source again
             *     replaces its chunks.
             */
            source: string;
            text: string;
        };
        IngestResponse: {
            chunks: number;
            source: string;
            tokens: number;
        };
        InputAudio: {
            data: string;
            format: string;
        };
        /** @description A list of items. */
        Items_Agent: {
            items: components["schemas"]["Agent"][];
        };
        /** @description A list of items. */
        Items_ApiKey: {
            items: components["schemas"]["ApiKey"][];
        };
        /** @description A list of items. */
        Items_Conversation: {
            items: components["schemas"]["Conversation"][];
        };
        /** @description A list of items. */
        Items_Delivery: {
            items: components["schemas"]["Delivery"][];
        };
        /** @description A list of items. */
        Items_DocumentSummary: {
            items: components["schemas"]["DocumentSummary"][];
        };
        /** @description A list of items. */
        Items_Episode: {
            items: components["schemas"]["Episode"][];
        };
        /** @description A list of items. */
        Items_Fact: {
            items: components["schemas"]["Fact"][];
        };
        /** @description A list of items. */
        Items_FactHistoryEntry: {
            items: components["schemas"]["FactHistoryEntry"][];
        };
        /** @description A list of items. */
        Items_KnowledgeHit: {
            items: components["schemas"]["KnowledgeHit"][];
        };
        /** @description A list of items. */
        Items_MessageHit: {
            items: components["schemas"]["MessageHit"][];
        };
        /** @description A list of items. */
        Items_Procedure: {
            items: components["schemas"]["Procedure"][];
        };
        /** @description A list of items. */
        Items_ProcedureVersion: {
            items: components["schemas"]["ProcedureVersion"][];
        };
        /** @description A list of items. */
        Items_RecallHit: {
            items: components["schemas"]["RecallHit"][];
        };
        /** @description A list of items. */
        Items_Tenant: {
            items: components["schemas"]["Tenant"][];
        };
        /** @description A list of items. */
        Items_UserSummary: {
            items: components["schemas"]["UserSummary"][];
        };
        /** @description A list of items. */
        Items_WebhookInfo: {
            items: components["schemas"]["WebhookInfo"][];
        };
        /** @description A chunk found by a knowledge search, with every score that placed it. */
        KnowledgeHit: {
            chunk: components["schemas"]["Chunk"];
            /**
             * Format: float
             * @description BM25 (higher is better), when found by words.
             */
            keyword_score?: number | null;
            /**
             * Format: float
             * @description The ranking score: the fused score in hybrid mode, else the one below.
             */
            score: number;
            /**
             * Format: float
             * @description Cosine similarity, when found by meaning.
             */
            vector_score?: number | null;
        };
        KnowledgeInfo: {
            collection?: components["schemas"]["Collection"] | null;
        };
        KnowledgeSearchRequest: {
            category?: string | null;
            /** Format: date-time */
            indexed_from?: string | null;
            /** Format: date-time */
            indexed_to?: string | null;
            /**
             * Format: double
             * @description Default: the agent's `memory.knowledge_min_score`.
             */
            min_score?: number | null;
            /** @description `hybrid` (default), `vector` or `keyword`. */
            mode?: components["schemas"]["SearchMode"];
            query: string;
            source?: string | null;
            /** @description Default: the agent's `memory.knowledge_top_k`. */
            top_k?: number | null;
        };
        /** @description The agent's model and how to call it. */
        LlmConfig: {
            /**
             * @description The environment variable of the server that holds the API key, when
             *     not the provider's conventional one (`OPENAI_API_KEY`,
             *     `AZURE_OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). Only those names and
             *     names starting `OCTOPUS_LLM_KEY_` are accepted, so an agent cannot make
             *     the server send any other secret of its environment. The key itself is
             *     never stored.
             */
            api_key_env?: string | null;
            /** @description Azure OpenAI API version, e.g. `2024-10-21`. */
            api_version?: string | null;
            /** @description Overrides the provider's default endpoint (required for Azure OpenAI). */
            base_url?: string | null;
            /** @description Azure OpenAI deployment name. */
            deployment?: string | null;
            max_output_tokens?: number | null;
            /** @description The model name (for Azure OpenAI: the model behind the deployment). */
            model: string;
            provider: components["schemas"]["LlmProvider"];
            /** @description A cheaper model for episode summaries; the main model when absent. */
            summary_model?: string | null;
            /** Format: double */
            temperature?: number | null;
            /** Format: double */
            top_p?: number | null;
        };
        /**
         * @description Which family of chat API serves the agent.
         * @enum {string}
         */
        LlmProvider: "openai" | "azure_openai" | "anthropic" | "ollama";
        /**
         * @description How a procedure matched a message.
         * @enum {string}
         */
        MatchedBy: "regex" | "semantic";
        /** @description How an agent's memory behaves. Every field has a default, so `{}` is valid. */
        MemoryConfig: {
            /**
             * @description The categories whose facts a turn's context shows in its facts block
             *     (names of `fact_categories`; another matches no fact); every fact
             *     when empty (the default).
             * @default []
             */
            context_fact_categories: string[];
            /**
             * @description Embed messages for recall by meaning. Default true.
             * @default true
             */
            embed_messages: boolean;
            /**
             * @description An open episode with no message for this long is closed with reason
             *     `timeout`; the next message opens a new one. Default 1800 (30 minutes).
             * @default 1800
             */
            episode_idle_timeout_secs: number;
            /**
             * @description Most tokens the snippets of past conversations may take in a turn's
             *     context. Default 2000 (about 8 KB of text).
             * @default 2000
             */
            episodic_max_tokens: number;
            /**
             * @description Turns either side of each recalled turn of a few words shown with it,
             *     so that "Wow, where was that?" comes with what it answers (a longer
             *     turn is shown alone). Default 1.
             * @default 1
             */
            episodic_neighbours: number;
            /**
             * @description Most memories of past conversations recalled per turn, best first.
             *     How many reach the context is decided by `episodic_max_tokens`.
             *     Default 45; 0 recalls none.
             * @default 45
             */
            episodic_top_k: number;
            /**
             * @description The categories the model files each learned fact under, one per
             *     fact (say `preference`, `profile`, `plan`): up to 20 names of
             *     lower-case letters, digits, `_` and `-`, each up to 40 characters.
             *     Facts are listed and recalled by category. None by default: facts
             *     carry no category.
             * @default []
             */
            fact_categories: string[];
            /**
             * @description What this agent's model should remember about users, and never
             *     remember, in the owner's words (up to 2,000 characters): added to
             *     the instructions with which the model writes an episode's key facts,
             *     which become the user's facts. None by default.
             * @default null
             */
            fact_instructions: string | null;
            /**
             * @description Most recent messages of the current episode kept as history. Default 20.
             * @default 20
             */
            history_max_messages: number;
            /**
             * Format: double
             * @description Knowledge chunks scoring below this (cosine) are dropped. Default 0.3.
             *     0.7 would suit models whose scores run high; with all-MiniLM-L6-v2 a
             *     correct paraphrase scores around 0.4.
             * @default 0.3
             */
            knowledge_min_score: number;
            /**
             * @description Knowledge chunks retrieved per turn. Default 5; 0 puts
             *     no knowledge in a context (a knowledge search that names no
             *     `top_k` then takes 5).
             * @default 5
             */
            knowledge_top_k: number;
            /**
             * @description Facts are learned from an open episode every this many user
             *     messages (from those since the last learning), besides at its close,
             *     so that what a user says is known for the rest of the session.
             *     Default 10; 0 learns at close only. Asks the agent's summary model,
             *     so it needs the server's `[llm] summarise_episodes`.
             * @default 10
             */
            learn_every_messages: number;
            /**
             * @description When an episode that called tools closes, ask the agent's model to
             *     propose a procedure from it (stored pending approval). Default false.
             * @default false
             */
            learn_procedures: boolean;
            /**
             * @description Most of the user's current facts put in a turn's context, in their
             *     own block: the user's standing instructions and preferences first
             *     (up to 20, whatever `context_fact_categories` says), then the other
             *     facts, each kind the newest first. Default 20; 0 puts none.
             * @default 20
             */
            max_context_facts: number;
            /**
             * @description Budget of the context assembled for one turn, in tokens. Default 8000.
             * @default 8000
             */
            max_working_memory_tokens: number;
            /**
             * @description Messages shorter than this many tokens are not embedded. Default 4.
             * @default 4
             */
            min_embedding_tokens: number;
            /**
             * @description What is done about PII in messages the caller did not mark, each
             *     level adding to the one before: `off`; `flag` (`contains_pii`);
             *     `redact` (also a redacted copy, `redacted_content`, with typed
             *     placeholders such as `[EMAIL]`); `redact_outgoing` (only redacted
             *     text goes to the model and the embedder); `redact_stored` (the
             *     redacted text is stored in place of the original). Default `redact`.
             * @default redact
             */
            pii: components["schemas"]["PiiPolicy"];
            /**
             * @description The region (ISO 3166 code in capitals: `US`, `GB`, `DE`, ...) whose numbering
             *     plan reads phone numbers written without a country code, in messages
             *     as they are stored and as they leave for the model. National numbers
             *     with a trunk `0` are also read in 28 other regions. Default `US`.
             * @default US
             * @enum {string}
             */
            pii_region: "AC" | "AD" | "AE" | "AF" | "AG" | "AI" | "AL" | "AM" | "AO" | "AR" | "AS" | "AT" | "AU" | "AW" | "AX" | "AZ" | "BA" | "BB" | "BD" | "BE" | "BF" | "BG" | "BH" | "BI" | "BJ" | "BL" | "BM" | "BN" | "BO" | "BQ" | "BR" | "BS" | "BT" | "BW" | "BY" | "BZ" | "CA" | "CC" | "CD" | "CF" | "CG" | "CH" | "CI" | "CK" | "CL" | "CM" | "CN" | "CO" | "CR" | "CU" | "CV" | "CW" | "CX" | "CY" | "CZ" | "DE" | "DJ" | "DK" | "DM" | "DO" | "DZ" | "EC" | "EE" | "EG" | "EH" | "ER" | "ES" | "ET" | "FI" | "FJ" | "FK" | "FM" | "FO" | "FR" | "GA" | "GB" | "GD" | "GE" | "GF" | "GG" | "GH" | "GI" | "GL" | "GM" | "GN" | "GP" | "GQ" | "GR" | "GT" | "GU" | "GW" | "GY" | "HK" | "HN" | "HR" | "HT" | "HU" | "ID" | "IE" | "IL" | "IM" | "IN" | "IO" | "IQ" | "IR" | "IS" | "IT" | "JE" | "JM" | "JO" | "JP" | "KE" | "KG" | "KH" | "KI" | "KM" | "KN" | "KP" | "KR" | "KW" | "KY" | "KZ" | "LA" | "LB" | "LC" | "LI" | "LK" | "LR" | "LS" | "LT" | "LU" | "LV" | "LY" | "MA" | "MC" | "MD" | "ME" | "MF" | "MG" | "MH" | "MK" | "ML" | "MM" | "MN" | "MO" | "MP" | "MQ" | "MR" | "MS" | "MT" | "MU" | "MV" | "MW" | "MX" | "MY" | "MZ" | "NA" | "NC" | "NE" | "NF" | "NG" | "NI" | "NL" | "NO" | "NP" | "NR" | "NU" | "NZ" | "OM" | "PA" | "PE" | "PF" | "PG" | "PH" | "PK" | "PL" | "PM" | "PR" | "PS" | "PT" | "PW" | "PY" | "QA" | "RE" | "RO" | "RS" | "RU" | "RW" | "SA" | "SB" | "SC" | "SD" | "SE" | "SG" | "SH" | "SI" | "SJ" | "SK" | "SL" | "SM" | "SN" | "SO" | "SR" | "SS" | "ST" | "SV" | "SX" | "SY" | "SZ" | "TA" | "TC" | "TD" | "TG" | "TH" | "TJ" | "TK" | "TL" | "TM" | "TN" | "TO" | "TR" | "TT" | "TV" | "TW" | "TZ" | "UA" | "UG" | "US" | "UY" | "UZ" | "VA" | "VC" | "VE" | "VG" | "VI" | "VN" | "VU" | "WF" | "WS" | "XK" | "YE" | "YT" | "ZA" | "ZM" | "ZW";
            /**
             * Format: double
             * @description A procedure without a trigger-pattern match joins the context when
             *     the message's meaning is at least this close to its own (cosine).
             *     Default 0.45: chosen by 5-fold cross-validation on the labelled set of
             *     `octopus-bench procedures` (every fold chose it; held-out F1 of
             *     pattern and meaning together 0.67 ± 0.06), for all-MiniLM-L6-v2.
             * @default 0.45
             */
            procedure_min_score: number;
            /**
             * @description Procedures put in one turn's context, best matches first. Default 3.
             * @default 3
             */
            procedures_top_k: number;
            /**
             * @description Most tokens of a profile block in a turn's context: how long and how
             *     often the user has talked with the agent, and their newest past
             *     conversations a line each (the lines go first when it is over, the
             *     oldest first). Default 0: no profile block; at most 4000.
             * @default 0
             */
            profile_max_tokens: number;
            /**
             * @description Have the agent's summary model write a paragraph about each user
             *     from their current facts and newest conversations, written again by
             *     the memory worker as they talk (a model call each time one of their
             *     conversations is summarised or facts are learned from it). The
             *     profile shows it, and the profile block leads with it, while every
             *     fact it was written from holds. Default false.
             * @default false
             */
            profile_summary: boolean;
            /**
             * @description Episodes older than this are archived by the retention job; none when absent.
             * @default null
             */
            retention_days: number | null;
            /**
             * @description Summarise an episode (more than 2 messages) when it closes. Default true.
             * @default true
             */
            summarize_on_close: boolean;
        };
        /**
         * @description What a memory vector stands for.
         * @enum {string}
         */
        MemoryKind: "message" | "summary" | "fact";
        /** @description A message as stored: what the caller sent, placed in its episode. */
        Message: {
            agent_id?: components["schemas"]["AgentId"] | null;
            contains_pii: boolean;
            content?: components["schemas"]["MessageContent"] | null;
            conversation_id: components["schemas"]["ConversationId"];
            /** Format: date-time */
            created_at: string;
            /** @description The id of this message's vector in the vector store, once embedded. */
            embedding_ref?: string | null;
            episode_id: components["schemas"]["EpisodeId"];
            id: components["schemas"]["MessageId"];
            name?: string | null;
            /** @description Position in the episode, from 0. */
            ordinal: number;
            redacted_content?: string | null;
            role: components["schemas"]["Role"];
            /** Format: date-time */
            timestamp: string;
            token_count: number;
            tool_call_id?: string | null;
            tool_calls: components["schemas"]["ToolCallRecord"][];
            usage?: components["schemas"]["Usage"] | null;
        };
        /**
         * @description A message's content: a plain string, or an array of parts (text, images, audio,
         *     files) exactly as the OpenAI chat-completions API takes it.
         */
        MessageContent: string | components["schemas"]["ContentPart"][];
        /** @description What erasing a message removed. */
        MessageErasureReceipt: {
            /**
             * @description No removed word is left on disk now. When false, a reader (an export,
             *     a backup) holds back the last step, and the words leave the files'
             *     logs as soon as it ends, without delaying anyone's writes.
             */
            compacted: boolean;
            episode_id: components["schemas"]["EpisodeId"];
            /** @description Facts learned from the message, deleted with every version of them. */
            facts_deleted: number;
            message_id: components["schemas"]["MessageId"];
            /**
             * @description The episode's summary (and key facts) was dropped: a closed episode's
             *     is written again from the messages left, by the agent's model when
             *     one answers, or extractively.
             */
            summary_dropped: boolean;
            /**
             * @description Memory vectors removed: the message's, its facts', its episode's
             *     summary's.
             */
            vectors: number;
        };
        MessageHit: {
            agent_id: components["schemas"]["AgentId"];
            message: components["schemas"]["Message"];
            /**
             * Format: double
             * @description BM25 relevance: higher is better.
             */
            score: number;
            user_id: string;
        };
        /**
         * Format: uuid
         * @description One message of an episode.
         */
        MessageId: string;
        /** @description A message with the turns around it in its episode. */
        MessageWindow: {
            /** @description Up to the requested number of later turns, oldest first. */
            after: components["schemas"]["Message"][];
            /** @description Up to the requested number of earlier turns, oldest first. */
            before: components["schemas"]["Message"][];
            message: components["schemas"]["Message"];
        };
        /** @description What a person writes to add a fact about a user by hand. */
        NewFactSpec: {
            /**
             * @description One of the agent's `memory.fact_categories`, or `instruction` or
             *     `preference` (a standing request, shown first in every context);
             *     none when absent.
             */
            category?: string | null;
            /**
             * @description A name of the client's for the fact, up to 200 characters, by which
             *     it is read (`?key=`) and written again: no other fact of the user
             *     that holds in the same category may have it.
             */
            key?: string | null;
            /** @description Why, up to 500 characters; kept in the fact's history. */
            reason?: string | null;
            /** @description The fact, 1 to 2,000 characters. */
            text: string;
            /**
             * Format: date-time
             * @description Since when it holds; now when absent.
             */
            valid_from?: string | null;
        };
        /** @description Ids in the dump, and what they became. */
        NewIds: {
            /**
             * @description Agents the copy renamed because the tenant had one of the name
             *     already ("support" becomes "support (copy)"): old name to new.
             */
            agent_names: {
                [key: string]: string;
            };
            agents: {
                [key: string]: string;
            };
            conversations: {
                [key: string]: string;
            };
            /** @description Shared procedures renamed for the same reason: old name to new. */
            procedure_names: {
                [key: string]: string;
            };
        };
        /** @description A message as a caller sends it. */
        NewMessage: {
            agent_id?: components["schemas"]["AgentId"] | null;
            contains_pii?: boolean;
            content?: components["schemas"]["MessageContent"] | null;
            /** @description The OpenAI `name` of the participant. */
            name?: string | null;
            redacted_content?: string | null;
            role: components["schemas"]["Role"];
            /**
             * Format: date-time
             * @description When the message was said; now when absent (give it when importing).
             */
            timestamp?: string | null;
            /** @description Computed by Octopus when absent. */
            token_count?: number | null;
            /** @description For a `tool` message in the OpenAI shape: the call it answers. */
            tool_call_id?: string | null;
            tool_calls?: components["schemas"]["ToolCallRecord"][];
        } & (({
            content: unknown;
        } | {
            tool_calls: unknown;
        }) & unknown & unknown & unknown);
        /** @description What a tenant asks for when it registers an endpoint. */
        NewWebhook: {
            description?: string | null;
            /** @description The event types to receive; at least one. */
            events: components["schemas"]["EventType"][];
            /** @description Where events are POSTed: an `http` or `https` URL. */
            url: string;
        };
        /**
         * @description What kind of personal or secret data a span holds.
         * @enum {string}
         */
        PiiKind: "email" | "phone" | "card" | "iban" | "ssn" | "ip_address" | "secret";
        /**
         * @description What an agent does about the PII in its messages: one setting, each
         *     level doing what the one before it does and more.
         * @enum {string}
         */
        PiiPolicy: "off" | "flag" | "redact" | "redact_outgoing" | "redact_stored";
        /**
         * @description A procedure: the version that serves (or, before any is approved, the
         *     latest), and where its versions stand.
         */
        Procedure: {
            agent_id?: components["schemas"]["AgentId"] | null;
            /** @description Who approved the serving version. */
            approved_by?: string | null;
            /** Format: date-time */
            created_at: string;
            /** @description Who wrote the version shown (an API key's name, or `learned:{episode}`). */
            created_by?: string | null;
            description?: string | null;
            id: components["schemas"]["ProcedureId"];
            is_active: boolean;
            /** @description Whether a version serves: only then can the procedure match. */
            is_approved: boolean;
            /** @description The newest version. */
            latest_version: number;
            name: string;
            /** @description The newest version, while it waits for approval. */
            pending_version?: number | null;
            /** @description The version that serves, if one was approved. */
            serving_version?: number | null;
            steps: components["schemas"]["ProcedureStep"][];
            trigger_pattern?: string | null;
            /** Format: date-time */
            updated_at: string;
            /** @description The version shown here. */
            version: number;
        };
        /**
         * Format: uuid
         * @description A named step-by-step procedure (procedural memory).
         */
        ProcedureId: string;
        /** @description A procedure that matched a turn's message, as the trace shows it. */
        ProcedureMatch: {
            id: components["schemas"]["ProcedureId"];
            matched_by: components["schemas"]["MatchedBy"];
            name: string;
            /**
             * Format: double
             * @description 1 for a regex match; the cosine similarity for a semantic one.
             */
            score: number;
            version: number;
        };
        /** @description A procedure as a caller creates it. */
        ProcedureSpec: {
            agent_id?: components["schemas"]["AgentId"] | null;
            description?: string | null;
            name: string;
            steps: components["schemas"]["ProcedureStep"][];
            /** @description A regular expression over the user's message (Rust `regex` syntax). */
            trigger_pattern?: string | null;
        };
        /** @description One step of a procedure. */
        ProcedureStep: {
            /**
             * @description The shape of the tool's arguments (a JSON Schema object, or an
             *     example); `null` is none.
             */
            arguments?: Record<string, never> | null;
            /** @description What to do, in words the model reads. */
            instruction: string;
            /** @description A tool to call for this step. */
            tool?: string | null;
        };
        /** @description One version of a procedure, as kept. */
        ProcedureVersion: {
            /** Format: date-time */
            created_at: string;
            created_by?: string | null;
            /** Format: date-time */
            decided_at?: string | null;
            /** @description Who approved or rejected it, and when. */
            decided_by?: string | null;
            description?: string | null;
            name: string;
            status: components["schemas"]["VersionStatus"];
            steps: components["schemas"]["ProcedureStep"][];
            trigger_pattern?: string | null;
            version: number;
        };
        /** @description A fact that holds. */
        ProfileFact: {
            /**
             * @description Who wrote this version: `model`, `patterns` (a standing request
             *     recognised in the user's words), or the name of the key that did.
             */
            changed_by: string;
            id: components["schemas"]["FactId"];
            /** @description The name a client gave it. */
            key?: string | null;
            /**
             * Format: date-time
             * @description When it became true.
             */
            since: string;
            /** @description `learned` or `manual`. */
            source: components["schemas"]["FactSource"];
            text: string;
        };
        /** @description The paragraph written about one user of one agent. */
        ProfileSummary: {
            agent_id: components["schemas"]["AgentId"];
            /** @description The facts it was written from. */
            fact_ids: components["schemas"]["FactId"][];
            text: string;
            user_id: string;
            /** Format: date-time */
            written_at: string;
        };
        /**
         * @description Why an item was left out of a context.
         * @enum {string}
         */
        PruneReason: "block_limit" | "oldest_history" | "lowest_score" | "latest_exchange";
        /** @description Something left out to fit the budget. */
        Pruned: {
            block: components["schemas"]["Block"];
            /** @description The item's id; for history, its position among the history messages. */
            id: string;
            reason: components["schemas"]["PruneReason"];
            /** Format: double */
            score?: number | null;
            /** @description What it cost before it was dropped. */
            tokens: number;
        };
        QueueCounts: {
            jobs: number;
        };
        /**
         * @description Memory work waiting: embeddings, summaries and facts the memory worker
         *     has yet to make. Recall finds a message by its words at once, and by
         *     meaning once `waiting` reaches 0.
         */
        QueueStatus: {
            /** @description Jobs of imports and other bulk writes. */
            bulk: number;
            /** @description Jobs of live conversations, done first. */
            live: number;
            /**
             * Format: date-time
             * @description When the oldest waiting job was queued.
             */
            oldest_queued_at?: string | null;
            /**
             * @description Jobs set aside: they cannot succeed as the server is configured
             *     (a summary with no model reachable).
             */
            parked: number;
            /** @description Jobs waiting (`live` and `bulk` together). */
            waiting: number;
        };
        /** @description Why a recall hit was returned where it was. */
        RecallExplanation: {
            /**
             * @description Every search that found it, best contribution first. Empty for a
             *     turn no search found, brought in next to one that was.
             */
            found_by: components["schemas"]["RecallFinding"][];
            /**
             * Format: double
             * @description The fusion's score: the sum of the contributions.
             */
            fused: number;
            /** @description How the searches' lists were combined. */
            fusion: components["schemas"]["Fusion"];
            /**
             * Format: double
             * @description The score once ranked in context: the fused score raised by a share
             *     of its best neighbouring turn's and of its episode's best.
             */
            in_context: number;
            /** @description Each reordering that changed its place, in the order they ran. */
            moved: components["schemas"]["RecallMove"][];
        };
        /** @description A search that found a memory. */
        RecallFinding: {
            /**
             * Format: double
             * @description What it added to the fused score: its score scaled as the fusion
             *     scales its list, times the weight. A hit's contributions sum to its
             *     `fused` score.
             */
            contribution: number;
            /**
             * @description What the search looked for when it was not the query: the name, the
             *     sub-question, the words.
             */
            looked_for?: string | null;
            /** @description The memory's place in that search's list, from 1. */
            rank: number;
            /**
             * Format: double
             * @description The search's own score: a cosine similarity by meaning, BM25 by words.
             */
            score: number;
            search: components["schemas"]["RecallSearch"];
            /**
             * Format: double
             * @description The list's share of the fused score.
             */
            weight: number;
        };
        /** @description One recalled memory. */
        RecallHit: {
            /** Format: date-time */
            at: string;
            conversation_id?: components["schemas"]["ConversationId"] | null;
            episode_id?: components["schemas"]["EpisodeId"] | null;
            explanation?: components["schemas"]["RecallExplanation"] | null;
            fact?: components["schemas"]["Fact"] | null;
            /**
             * Format: double
             * @description BM25, when the full-text search found it.
             */
            keyword_score?: number | null;
            kind: components["schemas"]["MemoryKind"];
            /**
             * Format: double
             * @description The final score, higher is better: the retrievers' scores fused, then
             *     raised by the neighbouring turns and the episode (see
             *     `recall_ranking`), then weighted by recency when asked.
             */
            score: number;
            /** @description For a summary hit: the episode's summary. */
            summary?: string | null;
            /**
             * @description What the memory says, whatever its kind: the message's words, the
             *     summary, or the fact (`jq '.items[].text'`).
             */
            text?: string;
            /**
             * @description How many of the speaker's messages said these words (the same words
             *     whatever their case, spacing and final `.`, `!` or `?`): a message
             *     said more than once is one hit, the newest time it was said.
             */
            times_said?: number;
            /**
             * Format: float
             * @description Cosine similarity, when the vector search found it.
             */
            vector_score?: number | null;
            window?: components["schemas"]["MessageWindow"] | null;
        };
        /**
         * @description How to retrieve.
         * @enum {string}
         */
        RecallMode: "hybrid" | "vector" | "keyword";
        /**
         * @description A reordering that moved a memory: its place before and after, from 1,
         *     among the candidates as they stood at that step.
         */
        RecallMove: {
            by: components["schemas"]["RecallReordering"];
            from: number;
            to: number;
        };
        /** @description A recall query: what an agent remembers of one user. */
        RecallQuery: {
            /**
             * @description Each hit says why it was returned where it was (`explanation`): the
             *     searches that found it, the fusion, each reordering that moved it.
             *     Off, recall does none of that work.
             */
            explain?: boolean;
            /**
             * @description Only facts filed under this category (one of the agent's
             *     `memory.fact_categories`); messages and summaries as ever.
             */
            fact_category?: string | null;
            /**
             * Format: date-time
             * @description Bounds on when the remembered message was said: `from` inclusive, `to`
             *     exclusive.
             */
            from?: string | null;
            /**
             * @description Whether facts learned about the user are recalled beside messages,
             *     those replaced since too (each says when it held).
             */
            include_facts?: boolean;
            /**
             * @description Whether past messages are recalled; without them, only summaries
             *     and facts (a framework's store searches its facts so).
             */
            include_messages?: boolean;
            /** @description Whether episode summaries are recalled beside messages. */
            include_summaries?: boolean;
            /**
             * Format: double
             * @description Drops vector hits of lower cosine similarity. Keyword hits are kept:
             *     they matched the query's words, and BM25 is on another scale.
             */
            min_score?: number;
            mode?: components["schemas"]["RecallMode"];
            /** @description Turns before and after each message hit to return with it. */
            neighbours?: number;
            query: string;
            /**
             * Format: double
             * @description When set, a memory's score is multiplied by `0.5^(age / half-life)`,
             *     age counted from the newest memory among the candidates.
             */
            recency_half_life_days?: number | null;
            /** Format: date-time */
            to?: string | null;
            top_k?: number;
            user_id: string;
        };
        /**
         * @description A step of recall's ranking that reorders the candidates.
         * @enum {string}
         */
        RecallReordering: "recency" | "named_speaker" | "named_date" | "held_at_time_asked" | "restated";
        /**
         * @description One of recall's searches.
         * @enum {string}
         */
        RecallSearch: "vector" | "keyword" | "name" | "sub_question_vector" | "sub_question_keyword" | "keyword_feedback" | "meaning_feedback";
        RelationalCounts: {
            conversations: number;
            episodes: number;
            /** @description Entries of those facts' histories, deleted facts' included. */
            fact_history?: number;
            /** @description Facts learned about the user, current and replaced. */
            facts?: number;
            key_facts: number;
            /** @description Procedures learned from the user's episodes, with all their versions. */
            learned_procedures: number;
            messages: number;
            /** @description Episode summaries (each episode's at most one). */
            summaries: number;
        };
        /**
         * @description A retrieved item offered to the context: a knowledge chunk or an episodic
         *     snippet.
         */
        Retrieved: {
            /** @description What the trace calls it: a chunk id, a message id, an episode id. */
            id: string;
            /**
             * @description Where it came from, shown to the model: a document source and heading,
             *     or a date and speaker.
             */
            label: string;
            /**
             * Format: double
             * @description The retrieval score, on one scale for every block (the engine gives
             *     each block's best 1); the lowest is pruned first.
             */
            score: number;
            text: string;
        };
        /**
         * @description Who speaks.
         * @enum {string}
         */
        Role: "user" | "assistant" | "system" | "tool";
        RollbackRequest: {
            /** @description An approved version, which serves again. */
            version: number;
        };
        /**
         * @description How a knowledge search finds chunks.
         * @enum {string}
         */
        SearchMode: "hybrid" | "vector" | "keyword";
        /** @description The server, and the caller's memory queue. */
        ServerStatus: {
            agent?: components["schemas"]["AgentStatus"] | null;
            /** @description Where data is kept: `sqlite` or `postgres`. */
            database: string;
            embedding: components["schemas"]["EmbeddingStatus"];
            memory_queue: components["schemas"]["QueueStatus"];
            /** @description Where vectors are searched: `embedded`, `pgvector` or `qdrant`. */
            vectors: string;
            /** @description The server's version. */
            version: string;
        };
        StreamOptions: {
            /**
             * @description Send usage in a last chunk with no choices, as OpenAI does; otherwise
             *     usage rides on the chunk with the finish reason.
             */
            include_usage?: boolean;
        };
        /**
         * @description Who wrote an episode's summary.
         * @enum {string}
         */
        SummarySource: "caller" | "llm" | "extractive";
        Tenant: {
            /** Format: date-time */
            created_at: string;
            id: components["schemas"]["TenantId"];
            name: string;
        };
        /** @description What deleting a tenant removed, counted per store. */
        TenantDeletionReceipt: {
            /** @description Conversation histories held in this server's memory. */
            cache: components["schemas"]["CacheCounts"];
            /**
             * @description No removed text is left in the data directory now (see
             *     [`ForgetReceipt::compacted`]).
             */
            compacted: boolean;
            /**
             * @description Entries of the full-text index over messages (those over knowledge
             *     and facts go with their rows).
             */
            full_text: components["schemas"]["FullTextCounts"];
            /** @description Memory work that was queued for the tenant. */
            queue: components["schemas"]["QueueCounts"];
            /** @description Rows of the relational store. */
            relational: components["schemas"]["TenantRowCounts"];
            tenant_id: components["schemas"]["TenantId"];
            /** @description Vectors removed, and the vector sets erased from the vector index. */
            vectors: components["schemas"]["TenantVectorCounts"];
        };
        /**
         * Format: uuid
         * @description A tenant: the unit of isolation. Nothing of one tenant is visible to another.
         */
        TenantId: string;
        TenantRowCounts: {
            /** @description Agents, deleted ones included. */
            agents: number;
            api_keys: number;
            conversations: number;
            episodes: number;
            fact_history: number;
            /** @description Facts, current and replaced. */
            facts: number;
            knowledge_chunks: number;
            messages: number;
            /** @description Procedures, each with all its versions. */
            procedures: number;
            /** @description Webhook deliveries, sent or waiting. */
            webhook_deliveries: number;
            webhooks: number;
        };
        TenantVectorCounts: {
            knowledge_vectors: number;
            /** @description Vectors of messages, summaries and facts. */
            memory_vectors: number;
            /**
             * @description Vector sets (an agent's memories, an agent's knowledge) erased from
             *     the vector index.
             */
            sets: number;
        };
        /** @description A call the model asked for. */
        ToolCall: {
            /** @description The arguments as JSON (an object, when the model kept to the schema). */
            arguments: Record<string, never>;
            /** @description The provider's id of the call; a tool result names it. */
            id: string;
            name: string;
        };
        /**
         * @description A tool or function call: the request the model made and the result it got back.
         *
         *     Accepted in this shape (snake_case, or camelCase), and also in the
         *     OpenAI assistant shape `{"id", "type": "function", "function": {"name", "arguments"}}`,
         *     which is converted to this one.
         */
        ToolCallRecord: {
            /** @description The arguments as JSON (an OpenAI arguments string is parsed when it is JSON). */
            arguments?: unknown;
            duration_ms?: number | null;
            function_name: string;
            is_error?: boolean | null;
            result?: unknown;
            tool_call_id: string;
        };
        ToolResultBody: {
            /** @description The tool's output: a string, or any JSON. */
            content: Record<string, never>;
            duration_ms?: number | null;
            is_error?: boolean;
            /** @description The id of the call answered (from the turn's `tool_calls`). */
            tool_call_id: string;
        };
        /**
         * @description A tool the model may call: its name, what it does, and the JSON Schema of
         *     its arguments.
         */
        ToolSpec: {
            description?: string | null;
            name: string;
            /** @description A JSON Schema object; `{"type": "object"}` when absent. */
            parameters?: Record<string, never>;
        };
        /**
         * @description What a turn answers: the reply as stored, the tools it asks for, the
         *     usage, and what memory it used.
         */
        TurnReply: {
            episode_id: components["schemas"]["EpisodeId"];
            finish_reason?: string | null;
            model: string;
            /** @description The provider and the model that answered. */
            provider: string;
            /** @description The model's reply, as stored (with `usage`). */
            reply: components["schemas"]["Message"];
            /**
             * @description Messages this request stored before the model was called: the user's
             *     message, or the tool results.
             */
            stored_message_ids: components["schemas"]["MessageId"][];
            /**
             * @description Tools the model asks the caller to run; continue the turn with their
             *     results. Empty when the reply is final.
             */
            tool_calls: components["schemas"]["ToolCall"][];
            /**
             * @description What memory the turn used: retrieved items with scores, what was
             *     pruned, tokens per block.
             */
            trace: components["schemas"]["ContextTrace"];
            usage: components["schemas"]["Usage"];
        };
        /**
         * @description A new message, or the results of the tool calls the model made in this
         *     turn (exactly one of the two).
         */
        TurnRequest: {
            /** @description The user's message. */
            message?: string | null;
            /**
             * @description Answer with server-sent events: `delta` events with the reply's text
             *     as it is generated, then `done` with the whole response (or `error`
             *     with an error body).
             */
            stream?: boolean;
            /** @description Results of the model's pending tool calls, one per call. */
            tool_results?: components["schemas"]["ToolResultBody"][];
            /** @description Tools the model may call; send them again when continuing a turn. */
            tools?: components["schemas"]["ToolSpec"][];
        } & ({
            message: string;
            tool_results?: unknown;
        } | {
            message?: null;
            tool_results: unknown;
        });
        /** @description Tokens the provider counted for one call. */
        Usage: {
            input_tokens: number;
            output_tokens: number;
        };
        /** @description One user's conversations with an agent, in numbers. */
        UserActivity: {
            /** @description Live conversations. */
            conversations: number;
            /** @description Live episodes of those conversations. */
            episodes: number;
            /**
             * Format: date-time
             * @description When the first of the conversations began.
             */
            first_seen_at: string;
            /**
             * Format: date-time
             * @description When the newest of them last changed.
             */
            last_active_at: string;
            /** @description Messages of those episodes. */
            messages: number;
        };
        /** @description What holds about one user of one agent, now. */
        UserProfile: {
            activity?: components["schemas"]["UserActivity"] | null;
            agent_id: components["schemas"]["AgentId"];
            /**
             * @description Every other fact that holds, by category: the agent's
             *     `fact_categories` in their order, then any other category, then the
             *     facts filed under none.
             */
            facts: components["schemas"]["FactGroup"][];
            /**
             * @description What they asked for every later turn ("always answer in French"),
             *     the newest first.
             */
            instructions: components["schemas"]["ProfileFact"][];
            /** @description What they said they prefer, the newest first. */
            preferences: components["schemas"]["ProfileFact"][];
            /**
             * @description The newest past conversations with a summary (up to 5), newest
             *     first, a line each.
             */
            recent_episodes: components["schemas"]["EpisodeLine"][];
            summary?: components["schemas"]["ProfileSummary"] | null;
            user_id: string;
        };
        /** @description One user of an agent, as its live conversations show them. */
        UserSummary: {
            /** @description Live conversations between this user and the agent. */
            conversation_count: number;
            /**
             * Format: date-time
             * @description When the newest of them last changed.
             */
            last_active_at: string;
            user_id: string;
        };
        VectorCounts: {
            fact_vectors?: number;
            /**
             * @description Saved vector-index graphs dropped, to be rebuilt from the remaining
             *     vectors at their next search.
             */
            graphs_rebuilt: number;
            message_vectors: number;
            summary_vectors: number;
        };
        /**
         * @description Where a version stands.
         * @enum {string}
         */
        VersionStatus: "pending" | "approved" | "rejected" | "superseded";
        /**
         * Format: uuid
         * @description An endpoint a tenant registered for events about its memory.
         */
        WebhookId: string;
        /** @description An endpoint as the API shows it: everything but its secret. */
        WebhookInfo: {
            /** Format: date-time */
            created_at: string;
            description?: string | null;
            /** Format: date-time */
            disabled_at?: string | null;
            /** @description Why it was disabled: it answered 410 Gone, or failed too long. */
            disabled_reason?: string | null;
            /** @description Whether deliveries are sent to it. */
            enabled: boolean;
            events: components["schemas"]["EventType"][];
            /**
             * Format: date-time
             * @description Since when every delivery to it has failed; absent while it succeeds.
             */
            failing_since?: string | null;
            id: components["schemas"]["WebhookId"];
            url: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    health: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description alive */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    healthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description alive */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    metrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the Prometheus text format, version 0.0.4 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain; version=0.0.4": string;
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `admin_only`: the operation needs the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    readyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description ready */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description the store does not answer */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    list_agents: {
        parameters: {
            query?: {
                /** @description 1 to 1000; default 50. */
                limit?: number;
                /** @description Default 0. */
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_Agent"];
                };
            };
            /** @description `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    create_agent: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AgentSpec"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Agent"];
                };
            };
            /** @description `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_name_taken`: an active agent has that name */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_agent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Agent"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_agent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    update_agent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    is_active?: boolean;
                    /** @description The agent's model and how to call it. */
                    llm?: {
                        /**
                         * @description The environment variable of the server that holds the API key, when
                         *     not the provider's conventional one (`OPENAI_API_KEY`,
                         *     `AZURE_OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). Only those names and
                         *     names starting `OCTOPUS_LLM_KEY_` are accepted, so an agent cannot make
                         *     the server send any other secret of its environment. The key itself is
                         *     never stored.
                         */
                        api_key_env?: string | null;
                        /** @description Azure OpenAI API version, e.g. `2024-10-21`. */
                        api_version?: string | null;
                        /** @description Overrides the provider's default endpoint (required for Azure OpenAI). */
                        base_url?: string | null;
                        /** @description Azure OpenAI deployment name. */
                        deployment?: string | null;
                        max_output_tokens?: number | null;
                        /** @description The model name (for Azure OpenAI: the model behind the deployment). */
                        model?: string;
                        provider?: components["schemas"]["LlmProvider"];
                        /** @description A cheaper model for episode summaries; the main model when absent. */
                        summary_model?: string | null;
                        /** Format: double */
                        temperature?: number | null;
                        /** Format: double */
                        top_p?: number | null;
                    };
                    /** @description How an agent's memory behaves. Every field has a default, so `{}` is valid. */
                    memory?: {
                        /**
                         * @description The categories whose facts a turn's context shows in its facts block
                         *     (names of `fact_categories`; another matches no fact); every fact
                         *     when empty (the default).
                         * @default []
                         */
                        context_fact_categories?: string[] | null;
                        /**
                         * @description Embed messages for recall by meaning. Default true.
                         * @default true
                         */
                        embed_messages?: boolean | null;
                        /**
                         * @description An open episode with no message for this long is closed with reason
                         *     `timeout`; the next message opens a new one. Default 1800 (30 minutes).
                         * @default 1800
                         */
                        episode_idle_timeout_secs?: number | null;
                        /**
                         * @description Most tokens the snippets of past conversations may take in a turn's
                         *     context. Default 2000 (about 8 KB of text).
                         * @default 2000
                         */
                        episodic_max_tokens?: number | null;
                        /**
                         * @description Turns either side of each recalled turn of a few words shown with it,
                         *     so that "Wow, where was that?" comes with what it answers (a longer
                         *     turn is shown alone). Default 1.
                         * @default 1
                         */
                        episodic_neighbours?: number | null;
                        /**
                         * @description Most memories of past conversations recalled per turn, best first.
                         *     How many reach the context is decided by `episodic_max_tokens`.
                         *     Default 45; 0 recalls none.
                         * @default 45
                         */
                        episodic_top_k?: number | null;
                        /**
                         * @description The categories the model files each learned fact under, one per
                         *     fact (say `preference`, `profile`, `plan`): up to 20 names of
                         *     lower-case letters, digits, `_` and `-`, each up to 40 characters.
                         *     Facts are listed and recalled by category. None by default: facts
                         *     carry no category.
                         * @default []
                         */
                        fact_categories?: string[] | null;
                        /**
                         * @description What this agent's model should remember about users, and never
                         *     remember, in the owner's words (up to 2,000 characters): added to
                         *     the instructions with which the model writes an episode's key facts,
                         *     which become the user's facts. None by default.
                         * @default null
                         */
                        fact_instructions?: string | null;
                        /**
                         * @description Most recent messages of the current episode kept as history. Default 20.
                         * @default 20
                         */
                        history_max_messages?: number | null;
                        /**
                         * Format: double
                         * @description Knowledge chunks scoring below this (cosine) are dropped. Default 0.3.
                         *     0.7 would suit models whose scores run high; with all-MiniLM-L6-v2 a
                         *     correct paraphrase scores around 0.4.
                         * @default 0.3
                         */
                        knowledge_min_score?: number | null;
                        /**
                         * @description Knowledge chunks retrieved per turn. Default 5; 0 puts
                         *     no knowledge in a context (a knowledge search that names no
                         *     `top_k` then takes 5).
                         * @default 5
                         */
                        knowledge_top_k?: number | null;
                        /**
                         * @description Facts are learned from an open episode every this many user
                         *     messages (from those since the last learning), besides at its close,
                         *     so that what a user says is known for the rest of the session.
                         *     Default 10; 0 learns at close only. Asks the agent's summary model,
                         *     so it needs the server's `[llm] summarise_episodes`.
                         * @default 10
                         */
                        learn_every_messages?: number | null;
                        /**
                         * @description When an episode that called tools closes, ask the agent's model to
                         *     propose a procedure from it (stored pending approval). Default false.
                         * @default false
                         */
                        learn_procedures?: boolean | null;
                        /**
                         * @description Most of the user's current facts put in a turn's context, in their
                         *     own block: the user's standing instructions and preferences first
                         *     (up to 20, whatever `context_fact_categories` says), then the other
                         *     facts, each kind the newest first. Default 20; 0 puts none.
                         * @default 20
                         */
                        max_context_facts?: number | null;
                        /**
                         * @description Budget of the context assembled for one turn, in tokens. Default 8000.
                         * @default 8000
                         */
                        max_working_memory_tokens?: number | null;
                        /**
                         * @description Messages shorter than this many tokens are not embedded. Default 4.
                         * @default 4
                         */
                        min_embedding_tokens?: number | null;
                        pii?: components["schemas"]["PiiPolicy"] | null;
                        /**
                         * @description The region (ISO 3166 code in capitals: `US`, `GB`, `DE`, ...) whose numbering
                         *     plan reads phone numbers written without a country code, in messages
                         *     as they are stored and as they leave for the model. National numbers
                         *     with a trunk `0` are also read in 28 other regions. Default `US`.
                         * @default US
                         * @enum {string|null}
                         */
                        pii_region?: "AC" | "AD" | "AE" | "AF" | "AG" | "AI" | "AL" | "AM" | "AO" | "AR" | "AS" | "AT" | "AU" | "AW" | "AX" | "AZ" | "BA" | "BB" | "BD" | "BE" | "BF" | "BG" | "BH" | "BI" | "BJ" | "BL" | "BM" | "BN" | "BO" | "BQ" | "BR" | "BS" | "BT" | "BW" | "BY" | "BZ" | "CA" | "CC" | "CD" | "CF" | "CG" | "CH" | "CI" | "CK" | "CL" | "CM" | "CN" | "CO" | "CR" | "CU" | "CV" | "CW" | "CX" | "CY" | "CZ" | "DE" | "DJ" | "DK" | "DM" | "DO" | "DZ" | "EC" | "EE" | "EG" | "EH" | "ER" | "ES" | "ET" | "FI" | "FJ" | "FK" | "FM" | "FO" | "FR" | "GA" | "GB" | "GD" | "GE" | "GF" | "GG" | "GH" | "GI" | "GL" | "GM" | "GN" | "GP" | "GQ" | "GR" | "GT" | "GU" | "GW" | "GY" | "HK" | "HN" | "HR" | "HT" | "HU" | "ID" | "IE" | "IL" | "IM" | "IN" | "IO" | "IQ" | "IR" | "IS" | "IT" | "JE" | "JM" | "JO" | "JP" | "KE" | "KG" | "KH" | "KI" | "KM" | "KN" | "KP" | "KR" | "KW" | "KY" | "KZ" | "LA" | "LB" | "LC" | "LI" | "LK" | "LR" | "LS" | "LT" | "LU" | "LV" | "LY" | "MA" | "MC" | "MD" | "ME" | "MF" | "MG" | "MH" | "MK" | "ML" | "MM" | "MN" | "MO" | "MP" | "MQ" | "MR" | "MS" | "MT" | "MU" | "MV" | "MW" | "MX" | "MY" | "MZ" | "NA" | "NC" | "NE" | "NF" | "NG" | "NI" | "NL" | "NO" | "NP" | "NR" | "NU" | "NZ" | "OM" | "PA" | "PE" | "PF" | "PG" | "PH" | "PK" | "PL" | "PM" | "PR" | "PS" | "PT" | "PW" | "PY" | "QA" | "RE" | "RO" | "RS" | "RU" | "RW" | "SA" | "SB" | "SC" | "SD" | "SE" | "SG" | "SH" | "SI" | "SJ" | "SK" | "SL" | "SM" | "SN" | "SO" | "SR" | "SS" | "ST" | "SV" | "SX" | "SY" | "SZ" | "TA" | "TC" | "TD" | "TG" | "TH" | "TJ" | "TK" | "TL" | "TM" | "TN" | "TO" | "TR" | "TT" | "TV" | "TW" | "TZ" | "UA" | "UG" | "US" | "UY" | "UZ" | "VA" | "VC" | "VE" | "VG" | "VI" | "VN" | "VU" | "WF" | "WS" | "XK" | "YE" | "YT" | "ZA" | "ZM" | "ZW" | null;
                        /**
                         * Format: double
                         * @description A procedure without a trigger-pattern match joins the context when
                         *     the message's meaning is at least this close to its own (cosine).
                         *     Default 0.45: chosen by 5-fold cross-validation on the labelled set of
                         *     `octopus-bench procedures` (every fold chose it; held-out F1 of
                         *     pattern and meaning together 0.67 ± 0.06), for all-MiniLM-L6-v2.
                         * @default 0.45
                         */
                        procedure_min_score?: number | null;
                        /**
                         * @description Procedures put in one turn's context, best matches first. Default 3.
                         * @default 3
                         */
                        procedures_top_k?: number | null;
                        /**
                         * @description Most tokens of a profile block in a turn's context: how long and how
                         *     often the user has talked with the agent, and their newest past
                         *     conversations a line each (the lines go first when it is over, the
                         *     oldest first). Default 0: no profile block; at most 4000.
                         * @default 0
                         */
                        profile_max_tokens?: number | null;
                        /**
                         * @description Have the agent's summary model write a paragraph about each user
                         *     from their current facts and newest conversations, written again by
                         *     the memory worker as they talk (a model call each time one of their
                         *     conversations is summarised or facts are learned from it). The
                         *     profile shows it, and the profile block leads with it, while every
                         *     fact it was written from holds. Default false.
                         * @default false
                         */
                        profile_summary?: boolean | null;
                        /**
                         * @description Episodes older than this are archived by the retention job; none when absent.
                         * @default null
                         */
                        retention_days?: number | null;
                        /**
                         * @description Summarise an episode (more than 2 messages) when it closes. Default true.
                         * @default true
                         */
                        summarize_on_close?: boolean | null;
                    } | null;
                    name?: string;
                    system_prompt?: string | null;
                };
                "application/merge-patch+json": {
                    is_active?: boolean;
                    /** @description The agent's model and how to call it. */
                    llm?: {
                        /**
                         * @description The environment variable of the server that holds the API key, when
                         *     not the provider's conventional one (`OPENAI_API_KEY`,
                         *     `AZURE_OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). Only those names and
                         *     names starting `OCTOPUS_LLM_KEY_` are accepted, so an agent cannot make
                         *     the server send any other secret of its environment. The key itself is
                         *     never stored.
                         */
                        api_key_env?: string | null;
                        /** @description Azure OpenAI API version, e.g. `2024-10-21`. */
                        api_version?: string | null;
                        /** @description Overrides the provider's default endpoint (required for Azure OpenAI). */
                        base_url?: string | null;
                        /** @description Azure OpenAI deployment name. */
                        deployment?: string | null;
                        max_output_tokens?: number | null;
                        /** @description The model name (for Azure OpenAI: the model behind the deployment). */
                        model?: string;
                        provider?: components["schemas"]["LlmProvider"];
                        /** @description A cheaper model for episode summaries; the main model when absent. */
                        summary_model?: string | null;
                        /** Format: double */
                        temperature?: number | null;
                        /** Format: double */
                        top_p?: number | null;
                    };
                    /** @description How an agent's memory behaves. Every field has a default, so `{}` is valid. */
                    memory?: {
                        /**
                         * @description The categories whose facts a turn's context shows in its facts block
                         *     (names of `fact_categories`; another matches no fact); every fact
                         *     when empty (the default).
                         * @default []
                         */
                        context_fact_categories?: string[] | null;
                        /**
                         * @description Embed messages for recall by meaning. Default true.
                         * @default true
                         */
                        embed_messages?: boolean | null;
                        /**
                         * @description An open episode with no message for this long is closed with reason
                         *     `timeout`; the next message opens a new one. Default 1800 (30 minutes).
                         * @default 1800
                         */
                        episode_idle_timeout_secs?: number | null;
                        /**
                         * @description Most tokens the snippets of past conversations may take in a turn's
                         *     context. Default 2000 (about 8 KB of text).
                         * @default 2000
                         */
                        episodic_max_tokens?: number | null;
                        /**
                         * @description Turns either side of each recalled turn of a few words shown with it,
                         *     so that "Wow, where was that?" comes with what it answers (a longer
                         *     turn is shown alone). Default 1.
                         * @default 1
                         */
                        episodic_neighbours?: number | null;
                        /**
                         * @description Most memories of past conversations recalled per turn, best first.
                         *     How many reach the context is decided by `episodic_max_tokens`.
                         *     Default 45; 0 recalls none.
                         * @default 45
                         */
                        episodic_top_k?: number | null;
                        /**
                         * @description The categories the model files each learned fact under, one per
                         *     fact (say `preference`, `profile`, `plan`): up to 20 names of
                         *     lower-case letters, digits, `_` and `-`, each up to 40 characters.
                         *     Facts are listed and recalled by category. None by default: facts
                         *     carry no category.
                         * @default []
                         */
                        fact_categories?: string[] | null;
                        /**
                         * @description What this agent's model should remember about users, and never
                         *     remember, in the owner's words (up to 2,000 characters): added to
                         *     the instructions with which the model writes an episode's key facts,
                         *     which become the user's facts. None by default.
                         * @default null
                         */
                        fact_instructions?: string | null;
                        /**
                         * @description Most recent messages of the current episode kept as history. Default 20.
                         * @default 20
                         */
                        history_max_messages?: number | null;
                        /**
                         * Format: double
                         * @description Knowledge chunks scoring below this (cosine) are dropped. Default 0.3.
                         *     0.7 would suit models whose scores run high; with all-MiniLM-L6-v2 a
                         *     correct paraphrase scores around 0.4.
                         * @default 0.3
                         */
                        knowledge_min_score?: number | null;
                        /**
                         * @description Knowledge chunks retrieved per turn. Default 5; 0 puts
                         *     no knowledge in a context (a knowledge search that names no
                         *     `top_k` then takes 5).
                         * @default 5
                         */
                        knowledge_top_k?: number | null;
                        /**
                         * @description Facts are learned from an open episode every this many user
                         *     messages (from those since the last learning), besides at its close,
                         *     so that what a user says is known for the rest of the session.
                         *     Default 10; 0 learns at close only. Asks the agent's summary model,
                         *     so it needs the server's `[llm] summarise_episodes`.
                         * @default 10
                         */
                        learn_every_messages?: number | null;
                        /**
                         * @description When an episode that called tools closes, ask the agent's model to
                         *     propose a procedure from it (stored pending approval). Default false.
                         * @default false
                         */
                        learn_procedures?: boolean | null;
                        /**
                         * @description Most of the user's current facts put in a turn's context, in their
                         *     own block: the user's standing instructions and preferences first
                         *     (up to 20, whatever `context_fact_categories` says), then the other
                         *     facts, each kind the newest first. Default 20; 0 puts none.
                         * @default 20
                         */
                        max_context_facts?: number | null;
                        /**
                         * @description Budget of the context assembled for one turn, in tokens. Default 8000.
                         * @default 8000
                         */
                        max_working_memory_tokens?: number | null;
                        /**
                         * @description Messages shorter than this many tokens are not embedded. Default 4.
                         * @default 4
                         */
                        min_embedding_tokens?: number | null;
                        pii?: components["schemas"]["PiiPolicy"] | null;
                        /**
                         * @description The region (ISO 3166 code in capitals: `US`, `GB`, `DE`, ...) whose numbering
                         *     plan reads phone numbers written without a country code, in messages
                         *     as they are stored and as they leave for the model. National numbers
                         *     with a trunk `0` are also read in 28 other regions. Default `US`.
                         * @default US
                         * @enum {string|null}
                         */
                        pii_region?: "AC" | "AD" | "AE" | "AF" | "AG" | "AI" | "AL" | "AM" | "AO" | "AR" | "AS" | "AT" | "AU" | "AW" | "AX" | "AZ" | "BA" | "BB" | "BD" | "BE" | "BF" | "BG" | "BH" | "BI" | "BJ" | "BL" | "BM" | "BN" | "BO" | "BQ" | "BR" | "BS" | "BT" | "BW" | "BY" | "BZ" | "CA" | "CC" | "CD" | "CF" | "CG" | "CH" | "CI" | "CK" | "CL" | "CM" | "CN" | "CO" | "CR" | "CU" | "CV" | "CW" | "CX" | "CY" | "CZ" | "DE" | "DJ" | "DK" | "DM" | "DO" | "DZ" | "EC" | "EE" | "EG" | "EH" | "ER" | "ES" | "ET" | "FI" | "FJ" | "FK" | "FM" | "FO" | "FR" | "GA" | "GB" | "GD" | "GE" | "GF" | "GG" | "GH" | "GI" | "GL" | "GM" | "GN" | "GP" | "GQ" | "GR" | "GT" | "GU" | "GW" | "GY" | "HK" | "HN" | "HR" | "HT" | "HU" | "ID" | "IE" | "IL" | "IM" | "IN" | "IO" | "IQ" | "IR" | "IS" | "IT" | "JE" | "JM" | "JO" | "JP" | "KE" | "KG" | "KH" | "KI" | "KM" | "KN" | "KP" | "KR" | "KW" | "KY" | "KZ" | "LA" | "LB" | "LC" | "LI" | "LK" | "LR" | "LS" | "LT" | "LU" | "LV" | "LY" | "MA" | "MC" | "MD" | "ME" | "MF" | "MG" | "MH" | "MK" | "ML" | "MM" | "MN" | "MO" | "MP" | "MQ" | "MR" | "MS" | "MT" | "MU" | "MV" | "MW" | "MX" | "MY" | "MZ" | "NA" | "NC" | "NE" | "NF" | "NG" | "NI" | "NL" | "NO" | "NP" | "NR" | "NU" | "NZ" | "OM" | "PA" | "PE" | "PF" | "PG" | "PH" | "PK" | "PL" | "PM" | "PR" | "PS" | "PT" | "PW" | "PY" | "QA" | "RE" | "RO" | "RS" | "RU" | "RW" | "SA" | "SB" | "SC" | "SD" | "SE" | "SG" | "SH" | "SI" | "SJ" | "SK" | "SL" | "SM" | "SN" | "SO" | "SR" | "SS" | "ST" | "SV" | "SX" | "SY" | "SZ" | "TA" | "TC" | "TD" | "TG" | "TH" | "TJ" | "TK" | "TL" | "TM" | "TN" | "TO" | "TR" | "TT" | "TV" | "TW" | "TZ" | "UA" | "UG" | "US" | "UY" | "UZ" | "VA" | "VC" | "VE" | "VG" | "VI" | "VN" | "VU" | "WF" | "WS" | "XK" | "YE" | "YT" | "ZA" | "ZM" | "ZW" | null;
                        /**
                         * Format: double
                         * @description A procedure without a trigger-pattern match joins the context when
                         *     the message's meaning is at least this close to its own (cosine).
                         *     Default 0.45: chosen by 5-fold cross-validation on the labelled set of
                         *     `octopus-bench procedures` (every fold chose it; held-out F1 of
                         *     pattern and meaning together 0.67 ± 0.06), for all-MiniLM-L6-v2.
                         * @default 0.45
                         */
                        procedure_min_score?: number | null;
                        /**
                         * @description Procedures put in one turn's context, best matches first. Default 3.
                         * @default 3
                         */
                        procedures_top_k?: number | null;
                        /**
                         * @description Most tokens of a profile block in a turn's context: how long and how
                         *     often the user has talked with the agent, and their newest past
                         *     conversations a line each (the lines go first when it is over, the
                         *     oldest first). Default 0: no profile block; at most 4000.
                         * @default 0
                         */
                        profile_max_tokens?: number | null;
                        /**
                         * @description Have the agent's summary model write a paragraph about each user
                         *     from their current facts and newest conversations, written again by
                         *     the memory worker as they talk (a model call each time one of their
                         *     conversations is summarised or facts are learned from it). The
                         *     profile shows it, and the profile block leads with it, while every
                         *     fact it was written from holds. Default false.
                         * @default false
                         */
                        profile_summary?: boolean | null;
                        /**
                         * @description Episodes older than this are archived by the retention job; none when absent.
                         * @default null
                         */
                        retention_days?: number | null;
                        /**
                         * @description Summarise an episode (more than 2 messages) when it closes. Default true.
                         * @default true
                         */
                        summarize_on_close?: boolean | null;
                    } | null;
                    name?: string;
                    system_prompt?: string | null;
                };
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Agent"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_name_taken`: an active agent has that name */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    knowledge_info: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["KnowledgeInfo"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_chunk: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
                chunk_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `chunk_not_found`: no such knowledge chunk; `collection_not_found`: the agent has no knowledge yet */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    read_document: {
        parameters: {
            query: {
                /** @description The document's source, as it was ingested. */
                source: string;
            };
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Document"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `document_not_found`: the agent's knowledge has no document of that source */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_documents: {
        parameters: {
            query?: {
                /** @description 1 to 1000; default 50. */
                limit?: number;
                /** @description Default 0. */
                offset?: number;
            };
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_DocumentSummary"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    ingest_document: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["IngestRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IngestResponse"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_inactive`: the agent is deactivated; `collection_mismatch`: the embedding model differs from the collection's */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `quota_exceeded`: the tenant is over a quota; retry after `retry-after` seconds */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_failed`: the embedding provider refused or failed */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_busy`: the embedding provider asked to retry later; so does `retry-after`; `embedding_unavailable`: the embedding model is not available; `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    search_knowledge: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["KnowledgeSearchRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_KnowledgeHit"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_failed`: the embedding provider refused or failed */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_busy`: the embedding provider asked to retry later; so does `retry-after`; `embedding_unavailable`: the embedding model is not available; `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    recall: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RecallQuery"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_RecallHit"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_failed`: the embedding provider refused or failed */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_busy`: the embedding provider asked to retry later; so does `retry-after`; `embedding_unavailable`: the embedding model is not available; `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_users: {
        parameters: {
            query?: {
                /** @description 1 to 1000; default 50. */
                limit?: number;
                /** @description Default 0. */
                offset?: number;
            };
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_UserSummary"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_facts: {
        parameters: {
            query?: {
                /** @description Replaced facts too, each with the period it held. Default false. */
                include_replaced?: boolean;
                /**
                 * @description Only facts filed under this category (one of the agent's
                 *     `memory.fact_categories`, or a standing request's `instruction` or
                 *     `preference`).
                 */
                category?: string;
                /**
                 * @description Only the fact the client added under this key (one per category,
                 *     with `include_replaced`, its replaced versions too).
                 */
                key?: string;
                /** @description 1 to 1000; default 50. */
                limit?: number;
                /** @description Default 0. */
                offset?: number;
            };
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_Fact"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    add_fact: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
                user_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewFactSpec"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Fact"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `fact_key_taken`: another fact of the user that holds in the same category has the `key`; `unknown_fact_category`: the fact's `category` is none of its agent's `memory.fact_categories` */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    user_profile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                agent_id: components["schemas"]["AgentId"];
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserProfile"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    chat_completion: {
        parameters: {
            query?: never;
            header?: {
                /** @description the user, when the body's `user` does not name one */
                "x-octopus-user"?: string | null;
                /** @description the conversation to continue; else the user's newest with the agent, started when there is none */
                "x-octopus-conversation"?: components["schemas"]["ConversationId"] | null;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ChatCompletionRequest"];
            };
        };
        responses: {
            /** @description a `chat.completion` object; with `stream`, `chat.completion.chunk` events, then `data: [DONE]` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                    "text/event-stream": unknown;
                };
            };
            /** @description `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `conversation_not_found`: no such conversation for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_deleted`: the conversation's agent was deleted; `agent_inactive`: the agent is deactivated; `conversation_moved`: another request changed the conversation while this one was decided (a tool call answered, say); send it again; `no_pending_tool_calls`: tool results were sent, but no tool call of this turn waits for one; `tool_results_mismatch`: the tool results do not answer the pending tool calls exactly, once each */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `conversation_deleted`: the conversation is deleted */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `quota_exceeded`: the tenant is over a quota; retry after `retry-after` seconds */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_failed`: the embedding provider refused or failed; `llm_provider_failed`: the agent's model provider failed or refused the request; `provider` names it */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_busy`: the embedding provider asked to retry later; so does `retry-after`; `embedding_unavailable`: the embedding model is not available; `llm_not_configured`: the agent's model cannot be called as configured (no API key, a refused key, a base URL the server does not call, a missing deployment or model); the agent's settings or the server's must change; `llm_provider_busy`: the agent's model provider is rate-limiting or overloaded; retry after `retry-after`; `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_conversations: {
        parameters: {
            query?: {
                agent_id?: components["schemas"]["AgentId"];
                user_id?: string;
                /** @description Include deleted conversations. Default false. */
                include_deleted?: boolean;
                limit?: number;
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_Conversation"];
                };
            };
            /** @description `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    create_conversation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ConversationSpec"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Conversation"];
                };
            };
            /** @description `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_inactive`: the agent is deactivated */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    import_conversation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ConversationImport"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ImportResponse"];
                };
            };
            /** @description `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_inactive`: the agent is deactivated; `speaker_not_found`: a message's `agent_id` names no agent of this tenant */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `quota_exceeded`: the tenant is over a quota; retry after `retry-after` seconds */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    import_chats: {
        parameters: {
            query: {
                /** @description The agent the conversations were with, from now on. */
                agent_id: components["schemas"]["AgentId"];
                /** @description The person whose conversations they are. */
                user_id: string;
            };
            header?: never;
            path: {
                /** @description whose export: chatgpt or claude */
                format: "chatgpt" | "claude";
            };
            cookie?: never;
        };
        /** @description the export's conversations.json */
        requestBody: {
            content: {
                "application/json": components["schemas"]["ExportFile"];
            };
        };
        responses: {
            /** @description every conversation was stored already, or the export had none */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChatsImported"];
                };
            };
            /** @description conversations were stored */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChatsImported"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `invalid_query`: a query parameter is unknown or of the wrong type; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_inactive`: the agent is deactivated */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `quota_exceeded`: the tenant is over a quota; retry after `retry-after` seconds */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_conversation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                conversation_id: components["schemas"]["ConversationId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Conversation"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `conversation_not_found`: no such conversation for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_conversation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                conversation_id: components["schemas"]["ConversationId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `conversation_not_found`: no such conversation for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    build_context: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                conversation_id: components["schemas"]["ConversationId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ContextRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ContextResponse"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `conversation_not_found`: no such conversation for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_deleted`: the conversation's agent was deleted; `agent_inactive`: the agent is deactivated */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_failed`: the embedding provider refused or failed */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_busy`: the embedding provider asked to retry later; so does `retry-after`; `embedding_unavailable`: the embedding model is not available; `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    append_messages: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                conversation_id: components["schemas"]["ConversationId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AppendBody"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AppendedMessages"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `conversation_not_found`: no such conversation for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_deleted`: the conversation's agent was deleted; `agent_inactive`: the agent is deactivated; `speaker_not_found`: a message's `agent_id` names no agent of this tenant */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `conversation_deleted`: the conversation is deleted */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `quota_exceeded`: the tenant is over a quota; retry after `retry-after` seconds */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    take_turn: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                conversation_id: components["schemas"]["ConversationId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TurnRequest"];
            };
        };
        responses: {
            /** @description the reply; with `stream`, server-sent events `delta` ({"text"}), then `done` (a TurnReply) or `error` (an error body) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TurnReply"];
                    "text/event-stream": unknown;
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `conversation_not_found`: no such conversation for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_deleted`: the conversation's agent was deleted; `agent_inactive`: the agent is deactivated; `conversation_moved`: another request changed the conversation while this one was decided (a tool call answered, say); send it again; `no_pending_tool_calls`: tool results were sent, but no tool call of this turn waits for one; `tool_results_mismatch`: the tool results do not answer the pending tool calls exactly, once each */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `conversation_deleted`: the conversation is deleted */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `quota_exceeded`: the tenant is over a quota; retry after `retry-after` seconds */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_failed`: the embedding provider refused or failed; `llm_provider_failed`: the agent's model provider failed or refused the request; `provider` names it */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_busy`: the embedding provider asked to retry later; so does `retry-after`; `embedding_unavailable`: the embedding model is not available; `llm_not_configured`: the agent's model cannot be called as configured (no API key, a refused key, a base URL the server does not call, a missing deployment or model); the agent's settings or the server's must change; `llm_provider_busy`: the agent's model provider is rate-limiting or overloaded; retry after `retry-after`; `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_episodes: {
        parameters: {
            query?: {
                agent_id?: components["schemas"]["AgentId"];
                user_id?: string;
                conversation_id?: components["schemas"]["ConversationId"];
                /** @description Episodes started at or after this instant (RFC 3339; write UTC as `Z`). */
                from?: string;
                /** @description Episodes started before this instant. */
                to?: string;
                /** @description List soft-deleted episodes instead of live ones. Default false. */
                deleted?: boolean;
                /** @description List the episodes retention archived instead of those in use. Default false. */
                archived?: boolean;
                limit?: number;
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_Episode"];
                };
            };
            /** @description `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `conversation_not_found`: no such conversation for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_episode: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                episode_id: components["schemas"]["EpisodeId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EpisodeWithMessages"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `episode_not_found`: no such episode for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_episode: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                episode_id: components["schemas"]["EpisodeId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Episode"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `episode_not_found`: no such episode for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    close_episode: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                episode_id: components["schemas"]["EpisodeId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CloseEpisodeRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Episode"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `episode_not_found`: no such episode for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `episode_closed`: the episode is closed already */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    propose_procedure: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                episode_id: components["schemas"]["EpisodeId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Procedure"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `episode_not_found`: no such episode for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `no_tool_calls`: the episode called no tool: there is no procedure to learn from it; `tenant_limit_reached`: the tenant holds as much as its quota allows ([quotas]: procedures, or their trigger patterns' compiled size); remove some first */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_failed`: the embedding provider refused or failed; `llm_provider_failed`: the agent's model provider failed or refused the request; `provider` names it */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_busy`: the embedding provider asked to retry later; so does `retry-after`; `embedding_unavailable`: the embedding model is not available; `llm_not_configured`: the agent's model cannot be called as configured (no API key, a refused key, a base URL the server does not call, a missing deployment or model); the agent's settings or the server's must change; `llm_provider_busy`: the agent's model provider is rate-limiting or overloaded; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    purge_episode: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                episode_id: components["schemas"]["EpisodeId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `episode_not_found`: no such episode for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `episode_not_deleted`: only a deleted or archived episode can be purged */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    restore_episode: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                episode_id: components["schemas"]["EpisodeId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Episode"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `episode_not_found`: no such episode for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `episode_live`: the episode is neither deleted nor archived, so there is nothing to restore */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    set_episode_summary: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                episode_id: components["schemas"]["EpisodeId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EpisodeSummaryRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Episode"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `episode_not_found`: no such episode for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    export_dump: {
        parameters: {
            query?: {
                /** @description Only this user's conversations (and the agents they talk to). */
                user_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the dump */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/x-ndjson": string;
                };
            };
            /** @description `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_fact: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                fact_id: components["schemas"]["FactId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Fact"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `fact_not_found`: no such fact for this tenant (or its episode is deleted or archived) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_fact: {
        parameters: {
            query?: {
                /** @description Why, up to 500 characters; kept in the fact's history. */
                reason?: string;
            };
            header?: never;
            path: {
                fact_id: components["schemas"]["FactId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FactDeletionReceipt"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `fact_not_found`: no such fact for this tenant (or its episode is deleted or archived) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    correct_fact: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                fact_id: components["schemas"]["FactId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["FactEdit"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Fact"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `fact_not_found`: no such fact for this tenant (or its episode is deleted or archived) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `correction_before_fact`: the correction's `valid_from` is before the version it corrects became true; a correction starts then or later; `fact_replaced`: the fact was replaced by a newer version; correct the version that holds (its `superseded_by` chain ends there) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    fact_history: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                fact_id: components["schemas"]["FactId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_FactHistoryEntry"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `fact_not_found`: no such fact for this tenant (or its episode is deleted or archived) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    import_dump: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description a dump */
        requestBody: {
            content: {
                "application/x-ndjson": string;
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DumpImported"];
                };
            };
            /** @description `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `collection_mismatch`: the embedding model differs from the collection's; `import_conflict`: an object of the dump exists already (its id or name is taken); nothing was imported; `procedure_name_taken`: an active procedure of the same agent (or shared) has that name */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_failed`: the embedding provider refused or failed */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_busy`: the embedding provider asked to retry later; so does `retry-after`; `embedding_unavailable`: the embedding model is not available; `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    search_messages: {
        parameters: {
            query: {
                /** @description Free text. Messages matching any of its words are returned, best BM25 first. */
                q: string;
                agent_id?: components["schemas"]["AgentId"];
                user_id?: string;
                conversation_id?: components["schemas"]["ConversationId"];
                /** @description Messages at or after this instant (RFC 3339; write UTC as `Z`). */
                from?: string;
                /** @description Messages before this instant. */
                to?: string;
                /** @description 1 to 200; default 20. */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_MessageHit"];
                };
            };
            /** @description `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `conversation_not_found`: no such conversation for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    erase_message: {
        parameters: {
            query?: {
                /**
                 * @description Why, up to 500 characters; kept in the histories of the facts
                 *     deleted with it.
                 */
                reason?: string;
            };
            header?: never;
            path: {
                message_id: components["schemas"]["MessageId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageErasureReceipt"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `message_not_found`: no such message for this tenant (or its episode is deleted) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_models: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a `list` of `model` objects, one per agent */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_procedures: {
        parameters: {
            query?: {
                /** @description This agent's own procedures (with `shared=true`, also the shared ones). */
                agent_id?: components["schemas"]["AgentId"];
                /** @description Only shared procedures (`true`) or only agents' own (`false`). */
                shared?: boolean;
                active?: boolean;
                /** @description Procedures with a serving (approved) version, or without. */
                approved?: boolean;
                /** @description Words in the name or description. */
                text?: string;
                limit?: number;
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_Procedure"];
                };
            };
            /** @description `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    create_procedure: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ProcedureSpec"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Procedure"];
                };
            };
            /** @description `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `procedure_name_taken`: an active procedure of the same agent (or shared) has that name; `tenant_limit_reached`: the tenant holds as much as its quota allows ([quotas]: procedures, or their trigger patterns' compiled size); remove some first */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_failed`: the embedding provider refused or failed */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_busy`: the embedding provider asked to retry later; so does `retry-after`; `embedding_unavailable`: the embedding model is not available; `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_procedure: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                procedure_id: components["schemas"]["ProcedureId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Procedure"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `procedure_not_found`: no such procedure for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_procedure: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                procedure_id: components["schemas"]["ProcedureId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `procedure_not_found`: no such procedure for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    update_procedure: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                procedure_id: components["schemas"]["ProcedureId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    description?: string | null;
                    is_active?: boolean;
                    name?: string;
                    steps?: components["schemas"]["ProcedureStep"][];
                    /** @description A regular expression over the user's message (Rust `regex` syntax). */
                    trigger_pattern?: string | null;
                };
                "application/merge-patch+json": {
                    description?: string | null;
                    is_active?: boolean;
                    name?: string;
                    steps?: components["schemas"]["ProcedureStep"][];
                    /** @description A regular expression over the user's message (Rust `regex` syntax). */
                    trigger_pattern?: string | null;
                };
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Procedure"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `procedure_not_found`: no such procedure for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `procedure_name_taken`: an active procedure of the same agent (or shared) has that name; `tenant_limit_reached`: the tenant holds as much as its quota allows ([quotas]: procedures, or their trigger patterns' compiled size); remove some first */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_failed`: the embedding provider refused or failed */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `embedding_provider_busy`: the embedding provider asked to retry later; so does `retry-after`; `embedding_unavailable`: the embedding model is not available; `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    approve_procedure: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                procedure_id: components["schemas"]["ProcedureId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Procedure"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `procedure_not_found`: no such procedure for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `no_pending_version`: the procedure has no version waiting for a decision; `procedure_name_taken`: an active procedure of the same agent (or shared) has that name; `tenant_limit_reached`: the tenant holds as much as its quota allows ([quotas]: procedures, or their trigger patterns' compiled size); remove some first */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    reject_procedure: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                procedure_id: components["schemas"]["ProcedureId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Procedure"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `procedure_not_found`: no such procedure for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `no_pending_version`: the procedure has no version waiting for a decision; `procedure_name_taken`: an active procedure of the same agent (or shared) has that name */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    rollback_procedure: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                procedure_id: components["schemas"]["ProcedureId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RollbackRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Procedure"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `procedure_not_found`: no such procedure for this tenant; `procedure_version_not_found`: the procedure has no such version */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `procedure_name_taken`: an active procedure of the same agent (or shared) has that name; `tenant_limit_reached`: the tenant holds as much as its quota allows ([quotas]: procedures, or their trigger patterns' compiled size); remove some first; `version_not_approved`: only a version that was approved can serve again */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    procedure_versions: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                procedure_id: components["schemas"]["ProcedureId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_ProcedureVersion"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `procedure_not_found`: no such procedure for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    status: {
        parameters: {
            query?: {
                /** @description Also say whether this agent's model can be called (a tenant's key). */
                agent_id?: components["schemas"]["AgentId"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ServerStatus"];
                };
            };
            /** @description `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_tenants: {
        parameters: {
            query?: {
                /** @description 1 to 1000; default 50. */
                limit?: number;
                /** @description Default 0. */
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_Tenant"];
                };
            };
            /** @description `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `admin_only`: the operation needs the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    create_tenant: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateTenant"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Tenant"];
                };
            };
            /** @description `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `admin_only`: the operation needs the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_tenant: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Tenant"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `admin_only`: the operation needs the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_not_found`: no such tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_tenant: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TenantDeletionReceipt"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `admin_only`: the operation needs the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_not_found`: no such tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    export_tenant_dump: {
        parameters: {
            query?: {
                /** @description Only this user's conversations (and the agents they talk to). */
                user_id?: string;
            };
            header?: never;
            path: {
                tenant_id: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the dump */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/x-ndjson": string;
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `admin_only`: the operation needs the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_not_found`: no such tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_api_keys: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_ApiKey"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `admin_only`: the operation needs the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_not_found`: no such tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    create_api_key: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateApiKey"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreatedApiKey"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `admin_only`: the operation needs the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant; `tenant_not_found`: no such tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    revoke_api_key: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: components["schemas"]["TenantId"];
                key_id: components["schemas"]["ApiKeyId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `admin_only`: the operation needs the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `api_key_not_found`: no such API key; `tenant_not_found`: no such tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    forget_user: {
        parameters: {
            query?: {
                /** @description Forget only what the user said to this agent; every agent when absent. */
                agent_id?: components["schemas"]["AgentId"];
            };
            header?: never;
            path: {
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ForgetReceipt"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_webhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_WebhookInfo"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    create_webhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewWebhook"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreatedWebhook"];
                };
            };
            /** @description `malformed_json`: the body is not valid JSON; `unreadable_body`: the request body could not be read */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `agent_not_found`: no such agent for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `request_timeout`: the request body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_limit_reached`: the tenant holds as much as its quota allows ([quotas]: procedures, or their trigger patterns' compiled size); remove some first */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_too_large`: the request body is larger than the server accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `server_busy`: the server is receiving as many request bodies as it holds at once; retry after `retry-after`; `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "retry-after"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_webhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                webhook_id: components["schemas"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookInfo"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `webhook_not_found`: no such webhook for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_webhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                webhook_id: components["schemas"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `webhook_not_found`: no such webhook for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_deliveries: {
        parameters: {
            query?: {
                /** @description 1 to 1000; default 50. */
                limit?: number;
                /** @description Default 0. */
                offset?: number;
            };
            header?: never;
            path: {
                webhook_id: components["schemas"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Items_Delivery"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id; `invalid_query`: a query parameter is unknown or of the wrong type */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `webhook_not_found`: no such webhook for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `invalid_request`: valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    enable_webhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                webhook_id: components["schemas"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookInfo"];
                };
            };
            /** @description `invalid_id`: a path parameter is not a valid id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unauthenticated`: no API key, or an unknown or revoked one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `tenant_key_required`: tenant data needs a tenant's key, not the admin key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `webhook_not_found`: no such webhook for this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `internal`: a failure inside the server; see its log */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `unavailable`: the store or a configured part is unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
}
