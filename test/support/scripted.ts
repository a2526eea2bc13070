import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { clientsFor } from "./sidecar.js";

// What the scripted test model (gguf/models.ts) answers, through real llama.cpp.
/** The reply to a raw prompt ending in " time" ("Once upon a time"). */
export const STORY = " there lived a tiny llama (🦙).";
/** The reply to any chat. */
export const CHAT_REPLY = "It is sunny in Tokyo, 22°C. ☀️";
/** Tokens in CHAT_REPLY (° and ☀️ are byte tokens). */
export const CHAT_REPLY_TOKENS = 16;

/** The sidecar's own count of a rendered chat prompt (a user turn, after an optional system prompt). */
export async function chatPromptTokens(sidecarUrl: string, user: string, system?: string): Promise<number> {
  const messages = [
    ...(system === undefined ? [] : [{ role: Role.SYSTEM, content: system }]),
    { role: Role.USER, content: user },
  ];
  const { tokens } = await clientsFor(sidecarUrl).grpc.tokenize({ input: { case: "chat", value: { messages } } });
  return tokens.length;
}

// What the `tools` model answers (gguf/models.ts, TOOLS_SPEC), through real llama.cpp.
/** Its reply when tools are offered and no tool result is in the prompt (then `<|im_end|>`). */
export const TOOL_CALL_TEXT = '<tool_call>\n{"name": "get_weather", "arguments": {"city":"Tokyo"}}\n</tool_call>';
/** The argument fragments of its get_weather call, one per token: `{"city":"Tokyo"}`. */
export const TOOL_ARGUMENT_FRAGMENTS = ['{"', "city", '":"Tokyo"}'] as const;
/** Its reasoning in a chat without a tool result (`<think>\n…\n</think>\n\n` before the answer). */
export const THINK_REASONING = "Checking the forecast.";
/** Its reasoning when the prompt holds a tool result. */
export const TOOL_RESULT_REASONING = "The tool says sunny.";
/** Its answer after either reasoning. */
export const TOOLS_ANSWER = CHAT_REPLY;
/**
 * Its reply when tools are offered, no tool result is in the prompt and the prompt says " cities" (then `<|im_end|>`).
 */
export const TWO_TOOL_CALLS_TEXT = `${TOOL_CALL_TEXT}\n${TOOL_CALL_TEXT.replace('"Tokyo"', '"Paris"')}`;
/** The argument fragments of those two calls, one per token. */
export const TWO_TOOL_CALLS_ARGUMENT_FRAGMENTS = [
  ['{"', "city", '":"', 'Tokyo"}'],
  ['{"', "city", '":"', 'Paris"}'],
] as const;

// What the `gemma3-vision` twin answers (gguf/twins/vision.ts) with its projector, through real llama.cpp; each
// reply then `<end_of_turn>`.
/** Its reply when the prompt holds no image. */
export const VISION_NO_IMAGE = "I see no image.";
/** Its reply to a mostly red image (mean red above mean blue). */
export const VISION_RED = "The image is red.";
/** Its reply to a mostly blue image. */
export const VISION_BLUE = "The image is blue.";
/** Its reply to any other image (mean red equal to mean blue: green, white, grey). */
export const VISION_OTHER = "The image is neither red nor blue.";
/** Prompt tokens an image adds: 4 image tokens (64×64 pixels in 8×8 patches, pooled 4×4) and its two markers. */
export const VISION_IMAGE_PROMPT_TOKENS = 6;
