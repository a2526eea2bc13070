// SDK clients that read a recorded transcript: every request they make gets `chunks` as its SSE body.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { replayFetch } from "./sse.js";

export function openaiReplaying(chunks: readonly Uint8Array[]): OpenAI {
  return new OpenAI({ baseURL: "http://edge.test/v1", apiKey: "x", maxRetries: 0, fetch: replayFetch(chunks) });
}

export function anthropicReplaying(chunks: readonly Uint8Array[]): Anthropic {
  return new Anthropic({ baseURL: "http://edge.test", apiKey: "x", maxRetries: 0, fetch: replayFetch(chunks) });
}
