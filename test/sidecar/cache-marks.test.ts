// Cache marks (GenerateRequest.cache_marks; sidecar/engine/chat/cache-marks.ts) on a real sidecar
// over gRPC with the scripted model: `cache_written_tokens` on start and finish counts exactly the
// prompt tokens from the cached prefix's end to the last mark's end, a repeated request writes
// nothing, and too many marks or a bad ttl are INVALID_ARGUMENT.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Role, type ChatMessageSchema, type GenerateRequestSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, collect, startTestSidecar, type InferenceClient } from "../support/sidecar.js";

interface Request {
  readonly input: NonNullable<MessageInitShape<typeof GenerateRequestSchema>["input"]>;
  readonly cacheMarks?: { messages: number; ttlSeconds: number }[];
}
type Messages = MessageInitShape<typeof ChatMessageSchema>[];

let sidecar: RunningSidecar;
let client: InferenceClient;
beforeAll(async () => {
  // One sequence and no KV cache tier: what is cached is what the sequence holds from the last request.
  sidecar = await startTestSidecar({ sequences: 1, contextSize: 1024 });
  client = clientsFor(sidecar.url).grpc;
}, 60_000);
afterAll(() => sidecar?.stop());

/** The counts of start and finish. */
async function counts(
  request: Request,
): Promise<{ prompt: number; cached: number; written: number; finishWritten: number }> {
  const events = await collect(client.generate({ maxTokens: 4, sampling: { temperature: 0 }, ...request }));
  const [first, last] = [events[0], events.at(-1)];
  if (first?.case !== "start" || last?.case !== "finish") throw new Error("no start or finish");
  return {
    prompt: first.value.promptTokens,
    cached: first.value.cachedTokens,
    written: first.value.cacheWrittenTokens,
    finishWritten: last.value.cacheWrittenTokens,
  };
}

const sharedPrefix = (a: readonly number[], b: readonly number[]): number => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};

const STORY = "Once upon a time, in a valley far away, there lived a tiny llama.";
const messagesOf = (system: string): Messages => [
  { role: Role.SYSTEM, content: system },
  { role: Role.USER, content: "Hello!" },
];
const chat = (messages: Messages) => ({ case: "chat" as const, value: { messages } });
const tokenize = async (messages: Messages): Promise<number[]> =>
  (await client.tokenize({ input: chat(messages) })).tokens;

describe("cache marks on a real sidecar", () => {
  it("a mark on a raw prompt: the whole prompt but its last token is written, then read", async () => {
    const input = { case: "prompt" as const, value: STORY };
    const first = await counts({ input, cacheMarks: [{ messages: 0, ttlSeconds: 300 }] });
    expect(first.written).toBe(first.prompt - 1 - first.cached);
    expect(first.finishWritten).toBe(first.written);
    const again = await counts({ input, cacheMarks: [{ messages: 0, ttlSeconds: 300 }] });
    expect(again).toEqual({ prompt: first.prompt, cached: first.prompt - 1, written: 0, finishWritten: 0 });
    // No mark: nothing written.
    expect((await counts({ input })).written).toBe(0);
  });

  it(
    "a mark on the system message: the prompt's tokens shared with the system message's rendering, from the cached " +
      "prefix on",
    async () => {
      const system = "You answer questions about the weather, briefly and in English.";
      const input = chat(messagesOf(system));
      const whole = await tokenize(input.value.messages);
      // The system message alone, as Tokenize renders it (ready for a reply: the shared part is the same).
      const mark = sharedPrefix(await tokenize(input.value.messages.slice(0, 1)), whole);
      expect(mark).toBeGreaterThan(10);
      expect(mark).toBeLessThan(whole.length - 5);
      // The sequence holds a raw prompt: the cached prefix is what the two share.
      await counts({ input: { case: "prompt", value: STORY } });
      const cached = sharedPrefix((await client.tokenize({ input: { case: "text", value: STORY } })).tokens, whole);
      const first = await counts({ input, cacheMarks: [{ messages: 1, ttlSeconds: 3600 }] });
      expect(first).toEqual({ prompt: whole.length, cached, written: mark - cached, finishWritten: mark - cached });
      const again = await counts({ input, cacheMarks: [{ messages: 1, ttlSeconds: 3600 }] });
      expect(again).toEqual({ prompt: whole.length, cached: whole.length - 1, written: 0, finishWritten: 0 });
      // The last of several marks counts.
      const other = chat(messagesOf(`${system} Also mention the temperature.`));
      const otherWhole = await tokenize(other.value.messages);
      const otherCached = sharedPrefix(whole, otherWhole);
      const both = await counts({
        input: other,
        cacheMarks: [
          { messages: 1, ttlSeconds: 300 },
          { messages: 2, ttlSeconds: 300 },
        ],
      });
      expect(both).toEqual({
        prompt: otherWhole.length,
        cached: otherCached,
        written: otherWhole.length - 1 - otherCached,
        finishWritten: otherWhole.length - 1 - otherCached,
      });
    },
  );

  it("refuses more than 4 marks, and a ttl outside 1..86400, with INVALID_ARGUMENT", async () => {
    const input = { case: "prompt" as const, value: "Hi" };
    const refusal = async (request: Omit<Request, "input">): Promise<unknown> =>
      collect(client.generate({ input, ...request })).catch((error: unknown) => error);
    const five = Array.from({ length: 5 }, () => ({ messages: 0, ttlSeconds: 60 }));
    for (const [cacheMarks, message] of [
      [five, "the request has 5 cache marks: at most 4 are allowed"],
      [[{ messages: 0, ttlSeconds: 0 }], "cache mark 0 has ttl_seconds 0: use 1 to 86400"],
      [[{ messages: 0, ttlSeconds: 86_401 }], "cache mark 0 has ttl_seconds 86401: use 1 to 86400"],
    ] as const) {
      const error = await refusal({ cacheMarks: [...cacheMarks] });
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.InvalidArgument);
      expect((error as ConnectError).rawMessage).toBe(message);
    }
  });
});
