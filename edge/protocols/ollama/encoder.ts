// Generation events → Ollama's NDJSON lines, and the whole answer of `stream: false`. Each line is
// `{model, created_at, message: {role, content, thinking?, tool_calls?}, done: false}` for /api/chat
// (`response` and `thinking` at the top for /api/generate): one line per token with text or thinking,
// one line per tool call once its arguments are complete (Ollama sends calls whole, arguments an
// object). The last line has empty content, `done: true`, `done_reason` and the metrics (usage.ts). With
// `return_progress`, before the reply's lines one line per progress event of the prompt's evaluation: empty content,
// `done: false` and llama-server's `prompt_progress` (a client that joins the contents reads nothing of it).
// With `logprobs`, a token's entry goes on the first line it writes, or, for a token that writes
// none (text held back), on the next line. A failure after the first line is one `{"error": …}` line.
import type { Finish, Progress, Token } from "../../../proto/gen/inference/v1/inference_pb.js";
import { logprobValue, pieceBytes, pieceText } from "../openai-common/logprobs.js";
import { promptProgress } from "../openai-common/llama-extras.js";
import { BlockSequencer, collectBlocks, finishContent, tokenContent, type Block } from "../../core/content.js";
import type { ResponseMeta, StreamEncoder } from "../../core/endpoint.js";
import { jsonEvent, type SseEvent } from "../../sse/frame.js";
import type { GenerationResult } from "../../upstream/generation.js";
import { ollamaErrorLine } from "./errors.js";
import { doneReason } from "./finish.js";
import { createdAt, ollamaMetrics } from "./usage.js";

/** Which route's shape: /api/chat's `message`, or /api/generate's `response`. */
export type OllamaShape = "chat" | "generate";

/** What a request's answer carries besides the reply: its model name as sent, and logprobs. */
export interface OllamaAnswer {
  readonly shape: OllamaShape;
  readonly model: string;
  /** With `logprobs`: the alternatives each token lists (`top_logprobs`); undefined without. */
  readonly top: number | undefined;
}

type Line = Record<string, unknown>;

interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
}

function logprobEntry(token: Token, top: number): TokenLogprob & { top_logprobs?: TokenLogprob[] } {
  const own = {
    token: pieceText(token.piece),
    logprob: logprobValue(token.logprob) ?? 0,
    bytes: pieceBytes(token.piece),
  };
  if (top === 0) return own;
  const alternatives = token.topLogprobs.slice(0, top).map((alt) => ({
    token: pieceText(alt.piece),
    logprob: logprobValue(alt.logprob) ?? 0,
    bytes: pieceBytes(alt.piece),
  }));
  return { ...own, top_logprobs: alternatives };
}

export interface OllamaToolCall {
  id: string;
  function: { index: number; name: string; arguments: unknown };
}

interface Part {
  readonly content?: string;
  readonly thinking?: string;
  readonly tool_calls?: OllamaToolCall[];
}

/** A call's arguments as Ollama sends them: an object (the text itself if a cut reply left it unparsable). */
function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text === "" ? "{}" : text);
  } catch {
    return text;
  }
}

function toolCallOf(block: Block): OllamaToolCall {
  const call = block.call ?? { index: 0, id: "", name: "" };
  return { id: call.id, function: { index: call.index, name: call.name, arguments: parsedArguments(block.text) } };
}

/** A part of the reply in the route's shape. */
function replyFields(shape: OllamaShape, part: Part): Record<string, unknown> {
  const thinking = part.thinking === undefined || part.thinking === "" ? {} : { thinking: part.thinking };
  if (shape === "generate") return { response: part.content ?? "", ...thinking };
  const calls = part.tool_calls === undefined || part.tool_calls.length === 0 ? {} : { tool_calls: part.tool_calls };
  return { message: { role: "assistant", content: part.content ?? "", ...thinking, ...calls } };
}

function line(answer: OllamaAnswer, meta: ResponseMeta, fields: Line): Line {
  return { model: answer.model, created_at: createdAt(meta.now()), ...fields, done: false };
}

/** The last line's (and a whole answer's) closing fields. */
function doneFields(finish: Finish, meta: ResponseMeta): Line {
  return { done: true, done_reason: doneReason(finish.reason), ...ollamaMetrics(finish, meta) };
}

export function ollamaStreamEncoder(answer: OllamaAnswer, meta: ResponseMeta): StreamEncoder {
  const emit = (part: Part) => [line(answer, meta, replyFields(answer.shape, part))];
  const blocks = new BlockSequencer<Line>({
    open: () => [],
    delta: (block, text) => {
      if (block.kind === "text") return emit({ content: text });
      return block.kind === "reasoning" ? emit({ thinking: text }) : [];
    },
    close: (block) => (block.kind === "tool_call" ? emit({ tool_calls: [toolCallOf(block)] }) : []),
  });
  let pending: unknown[] = [];
  /** The lines as events, the logprobs of the tokens so far on the first. */
  const events = (lines: Line[]): SseEvent[] => {
    const [first] = lines;
    if (first !== undefined && pending.length > 0) [first["logprobs"], pending] = [pending, []];
    return lines.map((l) => jsonEvent(l));
  };
  return {
    start: () => [],
    progress: (progress: Progress) =>
      events([line(answer, meta, { ...replyFields(answer.shape, {}), prompt_progress: promptProgress(progress) })]),
    token(token: Token) {
      if (answer.top !== undefined) pending.push(logprobEntry(token, answer.top));
      return events(blocks.pushAll(tokenContent(token)));
    },
    finish(finish: Finish) {
      const last = { ...line(answer, meta, replyFields(answer.shape, {})), ...doneFields(finish, meta) };
      return events([...blocks.pushAll(finishContent(finish)), ...blocks.close(), last]);
    },
    fail: (error) => [ollamaErrorLine(error)],
  };
}

/** The whole answer of `stream: false`: the reply's parts joined, then the closing fields. */
export function ollamaResult(answer: OllamaAnswer, meta: ResponseMeta, result: GenerationResult): Line {
  let content = "";
  let thinking = "";
  const calls: OllamaToolCall[] = [];
  for (const block of collectBlocks(result)) {
    if (block.kind === "text") content += block.text;
    else if (block.kind === "reasoning") thinking += block.text;
    else calls.push(toolCallOf(block));
  }
  const fields = replyFields(answer.shape, { content, thinking, tool_calls: calls });
  const top = answer.top;
  const logprobs = top === undefined ? {} : { logprobs: result.tokens.map((t) => logprobEntry(t, top)) };
  return { ...line(answer, meta, fields), ...logprobs, ...doneFields(result.finish, meta) };
}
