// Server-side compaction (docs/contract.md, "Compaction"): a Responses request with
// `context_management: [{type: "compaction"}]` whose prompt reaches its threshold is compacted
// before it is answered. The compaction pass (compact-route.ts) summarises the conversation; the reply is
// then generated from the compacted window (the input's user messages and the compaction item),
// and the Response's output opens with that compaction item for the client to send back.
import { resolveChatMedia } from "../../../core/media/for-request.js";
import type { AppContext } from "../../../core/context.js";
import { generateFor } from "../../../core/serve.js";
import { compactEndpoint } from "./compact-route.js";
import { openCompaction } from "./compaction-prompt.js";
import { markCompacted } from "./opening-item.js";
import type { CompactionItem } from "../response.js";
import { compactionTriggered, type ResponsesInputItem, type ResponsesRequest } from "../schema.js";
import { toGenerateRequest } from "../to-request.js";

/**
 * The prompt size at which the body is compacted: its `compact_threshold`, else what leaves the
 * reply its room in the model's context (`max_output_tokens`, else an eighth of the context);
 * undefined when it asks for no compaction or the context is not known.
 */
async function thresholdOf(body: ResponsesRequest, request: Request, context: AppContext): Promise<number | undefined> {
  const entry = body.context_management?.find((item) => item.type === "compaction");
  if (entry === undefined || compactionTriggered(body)) return undefined;
  if (entry.compact_threshold != null) return entry.compact_threshold;
  const model = body.model ?? "";
  const { models } = await context.sidecar.listModels({}, { signal: request.signal });
  const size = (models.find((m) => m.id === model || m.aliases.includes(model)) ?? models[0])?.contextSize ?? 0;
  if (size === 0) return undefined;
  return size - (body.max_output_tokens ?? Math.floor(size / 8));
}

/** The input's user messages, then the compaction item: what the reply is generated from. */
function compactedInput(body: ResponsesRequest, summary: string): ResponsesInputItem[] {
  const items =
    typeof body.input === "string"
      ? [{ type: "message" as const, role: "user" as const, content: body.input }]
      : body.input;
  const users = items.filter((item) => item.type === "message" && item.role === "user");
  return [...users, { type: "compaction", summary }];
}

/**
 * The body to answer: itself when no compaction is due, else the compacted body (its compaction
 * item kept for the Response); a Response when the compaction pass failed (its error answers).
 */
export async function compactIfDue(
  body: ResponsesRequest,
  request: Request,
  context: AppContext,
): Promise<ResponsesRequest | Response> {
  const threshold = await thresholdOf(body, request, context);
  if (threshold === undefined) return body;
  const prompt = toGenerateRequest(body);
  if (prompt.input.case !== "chat") return body;
  const chat = { case: "chat" as const, value: prompt.input.value };
  await resolveChatMedia(chat.value, context, request);
  const { tokens } = await context.sidecar.tokenize({ model: prompt.model, input: chat }, { signal: request.signal });
  if (tokens.length < threshold) return body;
  const answer = await generateFor(
    compactEndpoint,
    { ...body, stream: false, background: false, store: false },
    request,
    context,
  );
  if (!answer.ok) return answer;
  const { output } = (await answer.json()) as { output: unknown[] };
  const item = output.at(-1) as CompactionItem;
  return markCompacted({ ...body, input: compactedInput(body, openCompaction(item.encrypted_content) ?? "") }, item);
}
