import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { clientsFor } from "./sidecar.js";

// What the scripted test model (scripts/gguf/models.ts) answers, through real llama.cpp.
/** The reply to a raw prompt ending in " time" ("Once upon a time"). */
export const STORY = " there lived a tiny llama (🦙).";
/** The reply to any chat. */
export const CHAT_REPLY = "It is sunny in Tokyo, 22°C. ☀️";
/** Tokens in CHAT_REPLY (° and ☀️ are byte tokens). */
export const CHAT_REPLY_TOKENS = 16;

/** The sidecar's own count of a rendered chat prompt (a user turn, after an optional system prompt). */
export async function chatPromptTokens(sidecarUrl: string, user: string, system?: string): Promise<number> {
  const messages = [...(system === undefined ? [] : [{ role: Role.SYSTEM, content: system }]), { role: Role.USER, content: user }];
  const { tokens } = await clientsFor(sidecarUrl).grpc.tokenize({ input: { case: "chat", value: { messages } } });
  return tokens.length;
}

// What the `tools` model answers (scripts/gguf/models.ts, TOOLS_SPEC).
/** Its reasoning in any chat without a call to make (`<think>…</think>` in the reply). */
export const THINK_REASONING = "Checking the forecast.";
/** Its reasoning after a tool result: the same script. */
export const TOOL_RESULT_REASONING = THINK_REASONING;
/** Its answer after the reasoning. */
export const TOOLS_ANSWER = CHAT_REPLY;
/** The argument fragments of its get_weather call, one per token: `{"city":"Tokyo"}`. */
export const TOOL_ARGUMENT_FRAGMENTS = ['{"', "city", '":"Tokyo"}'] as const;
