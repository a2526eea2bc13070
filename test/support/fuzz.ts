// Hostile request bodies for every POST endpoint (fast-check), and the check every answer must
// pass: the protocol's error shape with a 4xx, a valid reply, or one of the statuses that mean
// "busy or unreachable" by design — never another 5xx, never a hang. Used by
// test/edge/fuzz.test.ts (a few hundred bodies in npm test) and scripts/fuzz.ts (npm run fuzz).
import fc from "fast-check";

export interface Endpoint {
  readonly name: string;
  readonly path: string;
  readonly anthropic: boolean;
  /** A valid body the mutations start from (short replies: small max_tokens). */
  readonly base: Record<string, unknown>;
  /** Field names worth mutating (the protocol's own, plus a few it does not know). */
  readonly fields: readonly string[];
}

const EXTRA = ["__proto__", "constructor", "prototype", "unknown_field", "", "x".repeat(300)];

export const ENDPOINTS: readonly Endpoint[] = [
  {
    name: "chat",
    path: "/v1/chat/completions",
    anthropic: false,
    base: { model: "m", messages: [{ role: "user", content: "Hello!" }], max_tokens: 8 },
    fields: [
      "model",
      "messages",
      "max_tokens",
      "max_completion_tokens",
      "stream",
      "stream_options",
      "temperature",
      "top_p",
      "top_k",
      "n",
      "stop",
      "seed",
      "logprobs",
      "top_logprobs",
      "logit_bias",
      "presence_penalty",
      "frequency_penalty",
      "response_format",
      "tools",
      "tool_choice",
      "parallel_tool_calls",
      "reasoning_effort",
      "functions",
      "audio",
      ...EXTRA,
    ],
  },
  {
    name: "completions",
    path: "/v1/completions",
    anthropic: false,
    base: { model: "m", prompt: "Once upon a time", max_tokens: 8 },
    fields: [
      "model",
      "prompt",
      "max_tokens",
      "stream",
      "temperature",
      "top_p",
      "stop",
      "seed",
      "logprobs",
      "echo",
      "suffix",
      "best_of",
      "logit_bias",
      "grammar",
      "response_format",
      ...EXTRA,
    ],
  },
  {
    name: "infill",
    path: "/infill",
    anthropic: false,
    base: { model: "m", input_prefix: "def f():\n    ", input_suffix: "\n", n_predict: 8 },
    fields: [
      "model",
      "input_prefix",
      "input_suffix",
      "input_extra",
      "prompt",
      "n_predict",
      "n_cmpl",
      "n_indent",
      "t_max_predict_ms",
      "stream",
      "temperature",
      "top_k",
      "top_p",
      "stop",
      "samplers",
      "return_tokens",
      ...EXTRA,
    ],
  },
  {
    name: "responses",
    path: "/v1/responses",
    anthropic: false,
    base: { model: "m", input: "Hello!", max_output_tokens: 8 },
    fields: [
      "model",
      "input",
      "instructions",
      "max_output_tokens",
      "stream",
      "temperature",
      "top_p",
      "tools",
      "tool_choice",
      "text",
      "reasoning",
      "previous_response_id",
      "store",
      "background",
      "metadata",
      "truncation",
      ...EXTRA,
    ],
  },
  {
    name: "messages",
    path: "/v1/messages",
    anthropic: true,
    base: { model: "m", max_tokens: 8, messages: [{ role: "user", content: "Hello!" }] },
    fields: [
      "model",
      "messages",
      "max_tokens",
      "system",
      "stream",
      "temperature",
      "top_p",
      "top_k",
      "stop_sequences",
      "tools",
      "tool_choice",
      "thinking",
      "output_config",
      "thread",
      "metadata",
      ...EXTRA,
    ],
  },
  {
    name: "count_tokens",
    path: "/v1/messages/count_tokens",
    anthropic: true,
    base: { model: "m", messages: [{ role: "user", content: "Hello!" }] },
    fields: ["model", "messages", "system", "tools", "tool_choice", "thinking", ...EXTRA],
  },
];

/** Strings no well-behaved client sends: lone surrogates, control bytes, huge, markup. */
const hostileString = fc.oneof(
  fc.string(),
  fc.constantFrom(
    "\uD800",
    "a\uDFFFb",
    "\u0000",
    "\u001b[2J",
    "<|im_end|>",
    "<tool_call>",
    "{{ raise('x') }}",
    "%s%n",
    "\u202e",
  ),
  fc.string({ minLength: 2000, maxLength: 5000 }),
);

/** Numbers at and past every edge. */
const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: false }),
  fc.constantFrom(-1, 0, 1, 0.5, 2 ** 32, 2 ** 53, 5e9, -5e9, 1e308, Number.MAX_SAFE_INTEGER + 2),
);

const deep = fc.integer({ min: 50, max: 2000 }).map((depth) => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
});

/** A hostile JSON schema: recursive $ref, a huge enum, a pattern, nonsense. */
const hostileSchema = fc.oneof(
  fc.constant({ $ref: "#" }),
  fc.constant({ type: "object", properties: { a: { $ref: "#" } }, required: ["a"] }),
  fc.integer({ min: 100, max: 60_000 }).map((n) => ({ enum: Array.from({ length: n }, (_, i) => `v${i}`) })),
  fc.constant({ type: "string", pattern: "^(a+)+$" }),
  fc.constant({ type: "array", items: false, minItems: 5 }),
  fc.jsonValue(),
);

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: hostileString },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: hostileSchema },
  { weight: 1, arbitrary: fc.array(hostileString, { minLength: 10, maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc.dictionary(
      fc.oneof(fc.string(), fc.constantFrom("-1", "99999999999", "1e3", "__proto__")),
      hostileNumber,
    ),
  },
  { weight: 1, arbitrary: fc.constant({ type: "image", source: {} }) },
  { weight: 1, arbitrary: fc.constant([{ type: "function", function: { name: "f", parameters: { $ref: "#" } } }]) },
);

type Mutation = { op: "set"; field: string; value: unknown } | { op: "delete"; field: string };

/** A body: the base with one to four mutations, or raw bytes. */
export function bodyArbitrary(endpoint: Endpoint): fc.Arbitrary<string | Uint8Array> {
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    fc.record({ op: fc.constant("set" as const), field: fc.constantFrom(...endpoint.fields), value: hostileValue }),
    fc.record({ op: fc.constant("delete" as const), field: fc.constantFrom(...Object.keys(endpoint.base)) }),
  );
  const mutated = fc.array(mutation, { minLength: 1, maxLength: 4 }).map((mutations) => {
    const body: Record<string, unknown> = structuredClone(endpoint.base);
    for (const m of mutations) {
      if (m.op === "delete") delete body[m.field];
      else
        Object.defineProperty(body, m.field, { value: m.value, enumerable: true, configurable: true, writable: true });
    }
    return JSON.stringify(body);
  });
  const raw = fc.oneof(
    fc.uint8Array({ maxLength: 200 }),
    fc.constantFrom(
      '{"model":',
      "[]",
      "null",
      "1",
      '"x"',
      "{}",
      '{"messages":[],"messages":[{"role":"user","content":"x"}]}',
    ),
    fc.constant(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])), // {"a":"\xff\xfe"}
  );
  return fc.oneof({ weight: 6, arbitrary: mutated }, { weight: 1, arbitrary: raw });
}

/** Statuses that mean busy, unreachable or too slow, by design. */
const BY_DESIGN_5XX = new Set([502, 503, 504, 529]);

/** What is wrong with an answer, or undefined when it keeps the contract. */
export async function checkAnswer(endpoint: Endpoint, response: Response): Promise<string | undefined> {
  const text = await response.text();
  const status = response.status;
  if (status >= 500 && !BY_DESIGN_5XX.has(status)) return `status ${status}: ${text.slice(0, 300)}`;
  if (status >= 400) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return `a ${status} whose body is not JSON: ${text.slice(0, 200)}`;
    }
    const ok = endpoint.anthropic
      ? (body as { type?: unknown; error?: { type?: unknown; message?: unknown } }).type === "error" &&
        typeof (body as { error?: { message?: unknown } }).error?.message === "string"
      : typeof (body as { error?: { message?: unknown; type?: unknown } }).error?.message === "string" &&
        typeof (body as { error?: { type?: unknown } }).error?.type === "string";
    return ok ? undefined : `a ${status} not in the protocol's error shape: ${text.slice(0, 200)}`;
  }
  if (status !== 200) return `unexpected status ${status}`;
  if ((response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    const ended = endpoint.anthropic
      ? /event: (message_stop|error)\n/.test(text)
      : /data: \[DONE\]\n|event: error\n/.test(text);
    return ended ? undefined : `a stream that does not end properly: …${text.slice(-200)}`;
  }
  try {
    JSON.parse(text);
    return undefined;
  } catch {
    return `a 200 whose body is not JSON: ${text.slice(0, 200)}`;
  }
}

/** POSTs one body with a time limit; a hang is reported as such. */
export async function send(
  base: string,
  endpoint: Endpoint,
  body: string | Uint8Array,
  timeoutMs: number,
): Promise<string | undefined> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(`${base}${endpoint.path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(endpoint.anthropic ? { "anthropic-version": "2023-06-01" } : {}),
      },
      body: typeof body === "string" ? body : new Uint8Array(body),
      signal,
    });
    return await checkAnswer(endpoint, response);
  } catch (error) {
    return signal.aborted ? `no answer within ${timeoutMs} ms (a hang)` : `the request failed: ${String(error)}`;
  }
}
