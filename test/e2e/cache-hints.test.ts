// Cache hints end to end (docs/contract.md, "Cache hints"): the official `@anthropic-ai/sdk` and
// `openai` clients against the edge on both runtimes, in front of a real sidecar running the
// scripted model (one sequence, so what is cached is what the last request left). A breakpoint on
// the system prompt is written once, exactly its tokens, then read; more than 4 are refused;
// `prompt_cache_retention` is checked and echoed.
import Anthropic, { type APIError } from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { startStack, type Stack } from "../support/edge.js";
import { describeOnRuntimes } from "../support/runtimes.js";
import { CHAT_REPLY_TOKENS } from "../support/scripted.js";
import { clientsFor, collect } from "../support/sidecar.js";

const STORY = "Once upon a time, in a valley far away, there lived a tiny llama.";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ sequences: 1, contextSize: 1024 });
}, 90_000);
afterAll(async () => stack?.stop());

const sharedPrefix = (a: readonly number[], b: readonly number[]): number => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};

/** The sidecar's one sequence left holding a raw story (no chat template): returns its tokens. */
async function reset(): Promise<number[]> {
  const grpc = clientsFor(stack.sidecar.url).grpc;
  await collect(grpc.generate({ input: { case: "prompt", value: STORY }, maxTokens: 2 }));
  return (await grpc.tokenize({ input: { case: "text", value: STORY } })).tokens;
}

/**
 * What the chat (system, user) costs: its prompt tokens, and where a mark on the system message
 * ends (the tokens the prompt shares with the system message's rendering).
 */
async function promptOf(system: string, user: string): Promise<{ whole: number[]; mark: number }> {
  const tokenize = async (messages: { role: Role; content: string }[]) =>
    (await clientsFor(stack.sidecar.url).grpc.tokenize({ input: { case: "chat", value: { messages } } })).tokens;
  const whole = await tokenize([
    { role: Role.SYSTEM, content: system },
    { role: Role.USER, content: user },
  ]);
  return { whole, mark: sharedPrefix(await tokenize([{ role: Role.SYSTEM, content: system }]), whole) };
}

describeOnRuntimes(
  "cache hints through the official SDKs (scripted model)",
  () => [stack.sidecar.url],
  (edge) => {
    const anthropic = () => new Anthropic({ baseURL: edge().url, apiKey: "not-checked", maxRetries: 0 });
    const openai = () => new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: "not-needed", maxRetries: 0 });

    it(
      "a breakpoint on the system prompt: written once (exactly its tokens), then read, streaming and " + "not",
      async () => {
        const system = `You answer questions about the weather in ${edge().runtime}, briefly and in English.`;
        const { whole, mark } = await promptOf(system, "Hello!");
        const request = {
          model: "m",
          max_tokens: 64,
          system: [{ type: "text" as const, text: system, cache_control: { type: "ephemeral" as const } }],
          messages: [{ role: "user" as const, content: "Hello!" }],
        };
        for (const stream of [false, true]) {
          const send = () =>
            stream ? anthropic().messages.stream(request).finalMessage() : anthropic().messages.create(request);
          const cached = sharedPrefix(await reset(), whole);
          const first = await send();
          expect(first.usage).toMatchObject({
            input_tokens: whole.length - mark,
            cache_creation_input_tokens: mark - cached,
            cache_read_input_tokens: cached,
            output_tokens: CHAT_REPLY_TOKENS,
          });
          // The same request again reads the whole prefix (all but the last token) and writes nothing.
          const again = await send();
          expect(again.usage).toMatchObject({
            input_tokens: 1,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: whole.length - 1,
            output_tokens: CHAT_REPLY_TOKENS,
          });
        }
      },
    );

    it("refuses more than 4 breakpoints with Anthropic's error", async () => {
      const marked = { type: "text" as const, text: "x", cache_control: { type: "ephemeral" as const } };
      const error = await anthropic()
        .messages.create({
          model: "m",
          max_tokens: 8,
          system: [marked, marked, marked],
          messages: [{ role: "user", content: [marked, marked] }],
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect((error as APIError).error).toEqual({
        type: "error",
        error: {
          type: "invalid_request_error",
          message: "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        },
      });
    });

    it(
      "prompt_cache_retention: valid ones are accepted and Responses echoes them; one it does not know is a hint, " +
        "served",
      async () => {
        const client = openai();
        for (const retention of ["in_memory", "24h"] as const) {
          const chat = await client.chat.completions.create({
            model: "m",
            messages: [{ role: "user", content: "Hello!" }],
            prompt_cache_retention: retention,
          });
          expect(chat.choices[0]?.finish_reason).toBe("stop");
          const response = await client.responses.create({
            model: "m",
            input: "Hello!",
            prompt_cache_retention: retention,
            prompt_cache_key: "user-42",
          });
          expect(response).toMatchObject({
            status: "completed",
            prompt_cache_retention: retention,
            prompt_cache_key: "user-42",
          });
        }
        const unknown = await client.chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: "Hello!" }],
          prompt_cache_retention: "forever" as never,
        });
        expect(unknown.choices[0]?.finish_reason).toBe("stop");
        const notEchoed = await client.responses.create({
          model: "m",
          input: "Hello!",
          prompt_cache_retention: "1h" as never,
        });
        expect([notEchoed.status, notEchoed.prompt_cache_retention]).toEqual(["completed", undefined]);
      },
    );
  },
);
