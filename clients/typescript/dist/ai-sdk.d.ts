import { AISDKError, type LanguageModelMiddleware } from "ai";
import { type Octopus, OctopusError } from "./index.js";
/** An error of the Octopus server, thrown where the AI SDK called it: an
 * `AISDKError` with the API's `status`, `code` and `field`. */
export declare class OctopusAISDKError extends AISDKError {
    readonly status: number;
    readonly code: string;
    readonly field: string | undefined;
    constructor(error: OctopusError);
}
export interface OctopusMemoryOptions {
    octopus: Octopus;
    /** Continue this conversation; or give `agentId` and `userId` to start one on the first call. */
    conversationId?: string;
    agentId?: string;
    userId?: string;
}
/** What the middleware wraps, and the conversation it keeps the exchange in. */
export interface OctopusMemory extends LanguageModelMiddleware {
    /** The conversation's id, once the first call started it. */
    readonly conversationId: string | undefined;
}
/**
 * A middleware for `wrapLanguageModel`: before each call, Octopus assembles
 * its working memory for the prompt's last user message, and its memory
 * blocks go in as one system message after the prompt's own; after it, the
 * user's message and the model's text are appended to the conversation.
 */
export declare function octopusMemory(options: OctopusMemoryOptions): OctopusMemory;
