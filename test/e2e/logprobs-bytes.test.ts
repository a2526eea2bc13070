// Exact logprobs of tokens that are not whole UTF-8 (byte-fallback tokens) through the real
// sidecar (logprobs.test.ts checks their form on the scripted story; this pins the values): shown
// as OpenAI shows them (`bytes:\xNN`), with their raw `bytes` on chat, and legacy `top_logprobs`
// keep one key per alternative asked for. The demo model's alternatives after its likeliest token
// are byte tokens (logprob -80, once top_p and top_k filter nothing); the scripted model writes
// 🦙, ° and ☀️ from byte tokens.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { startStack, type Stack } from "../support/edge.js";

let demo: Stack;
let scripted: Stack;
beforeAll(async () => {
  demo = await startStack({ model: modelPath("demo") });
  scripted = await startStack();
}, 90_000);
afterAll(async () => {
  await demo?.stop();
  await scripted?.stop();
});

async function postJson<T>(url: string, body: unknown): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

interface LegacyLogprobs {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Record<string, number>[];
  text_offset: number[];
}
interface ChatEntry {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

describe("logprobs of tokens that are not whole UTF-8, through the real sidecar", () => {
  it("legacy logprobs: N gives exactly N keys per entry, byte tokens as bytes:\\xNN (demo model)", async () => {
    const sampling = { prompt: "Once upon a time", max_tokens: 3, top_p: 1, top_k: 0 };
    const three = await postJson<{ choices: { logprobs: LegacyLogprobs }[] }>(`${demo.baseURL}/completions`, {
      ...sampling,
      logprobs: 3,
    });
    const alternatives = { "bytes:\\x9b": -80, "bytes:\\xbb": -80 };
    expect(three.choices[0]?.logprobs).toEqual({
      tokens: [" Once", " upon", " a"],
      token_logprobs: [0, 0, 0],
      top_logprobs: [
        { " Once": 0, ...alternatives },
        { " upon": 0, ...alternatives },
        { " a": 0, ...alternatives },
      ],
      // From the start of the prompt "Once upon a time", as OpenAI counts them: [16, 21, 26].
      text_offset: [16, 21, 26],
    });
    const five = await postJson<{ choices: { logprobs: LegacyLogprobs }[] }>(`${demo.baseURL}/completions`, {
      ...sampling,
      logprobs: 5,
    });
    expect(five.choices[0]?.logprobs.top_logprobs.map((entry) => Object.keys(entry))).toEqual(
      [" Once", " upon", " a"].map((word) => [word, "bytes:\\x9b", "bytes:\\xbb", "[", "bytes:\\x8b"]),
    );
  });

  it("chat top_logprobs show byte alternatives with their raw bytes (demo model)", async () => {
    const body = {
      messages: [{ role: "user", content: "Hello!" }],
      logprobs: true,
      top_logprobs: 3,
      top_p: 1,
      top_k: 0,
    };
    const reply = await postJson<{ choices: { logprobs: { content: ChatEntry[] } }[] }>(
      `${demo.baseURL}/chat/completions`,
      body,
    );
    const alternatives = [
      { token: "bytes:\\x9b", logprob: -80, bytes: [0x9b] },
      { token: "bytes:\\xbb", logprob: -80, bytes: [0xbb] },
    ];
    expect(reply.choices[0]?.logprobs.content).toEqual([
      {
        token: "Hi",
        logprob: 0,
        bytes: [72, 105],
        top_logprobs: [{ token: "Hi", logprob: 0, bytes: [72, 105] }, ...alternatives],
      },
      {
        token: " there",
        logprob: 0,
        bytes: [32, 116, 104, 101, 114, 101],
        top_logprobs: [{ token: " there", logprob: 0, bytes: [32, 116, 104, 101, 114, 101] }, ...alternatives],
      },
    ]);
  });

  it(
    "the scripted model's byte tokens: completions tokens and chat tokens with bytes that join to the " + "reply",
    async () => {
      const completion = await postJson<{ choices: { text: string; logprobs: LegacyLogprobs }[] }>(
        `${scripted.baseURL}/completions`,
        {
          prompt: "Once upon a time",
          logprobs: 1,
        },
      );
      expect(completion.choices[0]?.text).toBe(" there lived a tiny llama (🦙).");
      expect(completion.choices[0]?.logprobs.tokens).toEqual([
        " there",
        " lived",
        " a",
        " tiny",
        " llama",
        " (",
        "bytes:\\xf0",
        "bytes:\\x9f",
        "bytes:\\xa6",
        "bytes:\\x99",
        ").",
      ]);
      expect(completion.choices[0]?.logprobs.top_logprobs.map((entry) => Object.keys(entry))).toEqual(
        completion.choices[0]?.logprobs.tokens.map((token) => [token]),
      );
      const chat = await postJson<{ choices: { message: { content: string }; logprobs: { content: ChatEntry[] } }[] }>(
        `${scripted.baseURL}/chat/completions`,
        {
          messages: [{ role: "user", content: "Hello!" }],
          logprobs: true,
          top_logprobs: 1,
        },
      );
      const entries = chat.choices[0]?.logprobs.content ?? [];
      expect(entries.map((e) => e.token)).toEqual([
        "It",
        " is",
        " sunny",
        " in",
        " Tokyo,",
        " 22",
        "bytes:\\xc2",
        "bytes:\\xb0",
        "C.",
        " ",
        "bytes:\\xe2",
        "bytes:\\x98",
        "bytes:\\x80",
        "bytes:\\xef",
        "bytes:\\xb8",
        "bytes:\\x8f",
      ]);
      expect(Buffer.from(entries.flatMap((e) => e.bytes)).toString("utf8")).toBe(chat.choices[0]?.message.content);
      expect(entries.map((e) => e.top_logprobs.map((alt) => alt.token))).toEqual(entries.map((e) => [e.token]));
    },
  );
});
