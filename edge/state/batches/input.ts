// A batch's input checked at creation (docs/contract.md, "Batches"): OpenAI's JSONL file of
// `{custom_id, method, url, body}` lines and Anthropic's `requests` array. What makes the whole
// input unusable is a 400 (not JSONL, a line over the body limit, a url that is not the batch's
// endpoint, a repeated custom_id, too many lines); a line that is JSON but not a request becomes an
// error-file line and the batch goes on.
import { InvalidRequestError } from "../../base/errors.js";
import type { BatchLine } from "./store.js";

/** The routes a batch's lines may go to (OpenAI's batch endpoints). */
export const BATCH_ENDPOINTS = ["/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/embeddings"] as const;

/** Lines (requests) a batch may hold, on both APIs (OpenAI's own limit). */
export const MAX_BATCH_LINES = 50_000;

/** Anthropic's custom_id: 1 to 64 letters, digits, `_` and `-`. */
const ANTHROPIC_CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function tooMany(count: number, param: string): InvalidRequestError {
  return new InvalidRequestError(`A batch holds at most ${MAX_BATCH_LINES} requests; this one has ${count}.`, {
    param,
    code: "too_many_requests",
  });
}

/** A JSON line that is not a request: kept as an error-file line. */
function malformed(index: number, customId: string | null, message: string): BatchLine {
  return {
    index,
    customId,
    body: null,
    state: "failed",
    result: { error: { code: "invalid_request", message } },
    attempts: 0,
  };
}

/** One parsed JSONL line (line `number`, 1-based) as a batch line, or a 400 for the whole input. */
function lineOf(value: unknown, index: number, number: number, endpoint: string): BatchLine {
  if (!isObject(value)) return malformed(index, null, `Line ${number} is not a JSON object.`);
  const customId = typeof value["custom_id"] === "string" ? value["custom_id"] : null;
  if (customId === null) return malformed(index, null, `Line ${number} has no 'custom_id' string.`);
  if (value["method"] !== "POST") return malformed(index, customId, `Line ${number}'s 'method' must be 'POST'.`);
  const url = value["url"];
  if (typeof url !== "string") return malformed(index, customId, `Line ${number} has no 'url' string.`);
  if (url !== endpoint) {
    throw new InvalidRequestError(`Line ${number}'s url '${url}' is not the batch's endpoint '${endpoint}'.`, {
      param: "input_file_id",
      code: "mismatched_url",
    });
  }
  if (!isObject(value["body"])) return malformed(index, customId, `Line ${number}'s 'body' must be a JSON object.`);
  return { index, customId, body: value["body"], state: "pending", result: null, attempts: 0 };
}

/** The lines of an OpenAI batch input file; blank lines are skipped. */
export function parseOpenAiInput(text: string, endpoint: string, maxLineBytes: number): BatchLine[] {
  const lines: BatchLine[] = [];
  const seen = new Set<string>();
  const encoder = new TextEncoder();
  const raw = text.split("\n");
  for (const [i, line] of raw.entries()) {
    if (line.trim() === "") continue;
    const number = i + 1;
    if (lines.length === MAX_BATCH_LINES) throw tooMany(raw.filter((l) => l.trim() !== "").length, "input_file_id");
    if (encoder.encode(line).length > maxLineBytes) {
      throw new InvalidRequestError(`Line ${number} is over ${maxLineBytes} bytes, the largest request body.`, {
        param: "input_file_id",
        code: "line_too_large",
      });
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new InvalidRequestError(`The input file is not JSONL: line ${number} is not JSON.`, {
        param: "input_file_id",
        code: "invalid_jsonl",
      });
    }
    const parsed = lineOf(value, lines.length, number, endpoint);
    if (parsed.customId !== null && seen.has(parsed.customId)) {
      throw new InvalidRequestError(`Line ${number} repeats custom_id '${parsed.customId}'.`, {
        param: "input_file_id",
        code: "duplicate_custom_id",
      });
    }
    if (parsed.customId !== null) seen.add(parsed.customId);
    lines.push(parsed);
  }
  if (lines.length === 0)
    throw new InvalidRequestError("The input file holds no requests.", { param: "input_file_id", code: "empty_file" });
  return lines;
}

/** The lines of an Anthropic Message Batch's `requests`; each `params` at most `maxParamsBytes` as JSON. */
export function parseAnthropicRequests(body: unknown, maxParamsBytes: number): BatchLine[] {
  const requests = isObject(body) ? body["requests"] : undefined;
  if (!Array.isArray(requests) || requests.length === 0)
    throw new InvalidRequestError("requests: must be a non-empty array.", { param: "requests" });
  if (requests.length > MAX_BATCH_LINES) throw tooMany(requests.length, "requests");
  const seen = new Set<string>();
  return requests.map((request: unknown, index) => {
    const customId = isObject(request) ? request["custom_id"] : undefined;
    if (typeof customId !== "string" || !ANTHROPIC_CUSTOM_ID.test(customId)) {
      throw new InvalidRequestError(`requests.${index}.custom_id: must be 1 to 64 letters, digits, '_' or '-'.`, {
        param: `requests.${index}.custom_id`,
      });
    }
    if (seen.has(customId))
      throw new InvalidRequestError(`requests.${index}.custom_id: '${customId}' is repeated.`, {
        param: `requests.${index}.custom_id`,
      });
    seen.add(customId);
    const params = isObject(request) ? request["params"] : undefined;
    if (!isObject(params))
      throw new InvalidRequestError(`requests.${index}.params: must be an object.`, {
        param: `requests.${index}.params`,
      });
    if (new TextEncoder().encode(JSON.stringify(params)).length > maxParamsBytes) {
      const message = `requests.${index}.params: over ${maxParamsBytes} bytes, the largest request body.`;
      throw new InvalidRequestError(message, { param: `requests.${index}.params`, code: "line_too_large" });
    }
    return { index, customId, body: params, state: "pending", result: null, attempts: 0 };
  });
}
