// Legacy completions `echo` through the official client and the real sidecar (demo model: its
// script runs " time" → " Once" → " upon" → " a" → end, every other successor has logprob -80):
// the prompt comes first in the text, streamed as the first chunk, and with `logprobs` its own
// tokens come first, scored by the model, their text_offset counted from the start of the prompt.
// `max_tokens: 0` scores a text without generating (as evaluation harnesses do).
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { startStack, type Stack } from "../support/edge.js";

let stack: Stack;
let client: OpenAI;
beforeAll(async () => {
  stack = await startStack({ model: modelPath("demo") });
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
}, 90_000);
afterAll(() => stack?.stop());

const PROMPT = "Once upon a time";
// The prompt's tokens: "Once" has nothing before it but the beginning of the sequence; " a"
// follows " upon" as the script has it; the others are off the script.
const PROMPT_LOGPROBS = {
  tokens: ["Once", " upon", " a", " time"],
  token_logprobs: [-80, -80, 0, -80],
  text_offset: [0, 4, 9, 11],
};
const REPLY_LOGPROBS = { tokens: [" Once", " upon", " a"], token_logprobs: [0, 0, 0], text_offset: [16, 21, 26] };
const sampling = { model: "demo", prompt: PROMPT, top_p: 1, top_k: 0 } as const;

const rounded = (values: (number | null)[]) => values.map((v) => (v === null ? null : Math.round(v)));

describe("completions echo", () => {
  it("echoes the prompt before the reply, without logprobs", async () => {
    const completion = await client.completions.create({ ...sampling, max_tokens: 3, echo: true });
    expect(completion.choices[0]?.text).toBe("Once upon a time Once upon a");
    expect(completion.choices[0]?.logprobs).toBeNull();
  });

  it("scores the prompt's tokens, then the reply's, with offsets from the start of the prompt", async () => {
    const completion = await client.completions.create({ ...sampling, max_tokens: 3, echo: true, logprobs: 1 });
    const logprobs = completion.choices[0]?.logprobs;
    expect(logprobs?.tokens).toEqual([...PROMPT_LOGPROBS.tokens, ...REPLY_LOGPROBS.tokens]);
    expect(rounded(logprobs?.token_logprobs ?? [])).toEqual([
      ...PROMPT_LOGPROBS.token_logprobs,
      ...REPLY_LOGPROBS.token_logprobs,
    ]);
    expect(logprobs?.text_offset).toEqual([...PROMPT_LOGPROBS.text_offset, ...REPLY_LOGPROBS.text_offset]);
    // One alternative each, the model's likeliest: after the beginning and after "Once" (off the
    // script) the demo's chat reply "Hi"; after " a" its end token, which has no text.
    expect(logprobs?.top_logprobs).toEqual([
      { Hi: 0 },
      { Hi: 0 },
      { " a": 0 },
      { "": 0 },
      { " Once": 0 },
      { " upon": 0 },
      { " a": 0 },
    ]);
  });

  it("max_tokens 0 scores the text alone", async () => {
    const completion = await client.completions.create({ ...sampling, max_tokens: 0, echo: true, logprobs: 0 });
    expect(completion.choices[0]?.text).toBe(PROMPT);
    expect(completion.choices[0]?.finish_reason).toBe("length");
    expect(completion.choices[0]?.logprobs?.tokens).toEqual(PROMPT_LOGPROBS.tokens);
    expect(rounded(completion.choices[0]?.logprobs?.token_logprobs ?? [])).toEqual(PROMPT_LOGPROBS.token_logprobs);
    expect(completion.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 0 });
  });

  it("streams the echoed prompt as the first chunk", async () => {
    const stream = await client.completions.create({
      ...sampling,
      max_tokens: 3,
      echo: true,
      logprobs: 0,
      stream: true,
    });
    const chunks: { text: string; tokens: string[]; offsets: number[] }[] = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice === undefined || (choice.text === "" && choice.finish_reason !== null)) continue;
      chunks.push({
        text: choice.text,
        tokens: choice.logprobs?.tokens ?? [],
        offsets: choice.logprobs?.text_offset ?? [],
      });
    }
    expect(chunks).toEqual([
      { text: PROMPT, tokens: PROMPT_LOGPROBS.tokens, offsets: PROMPT_LOGPROBS.text_offset },
      { text: " Once", tokens: [" Once"], offsets: [16] },
      { text: " upon", tokens: [" upon"], offsets: [21] },
      { text: " a", tokens: [" a"], offsets: [26] },
    ]);
  });
});
