// Legacy and chat logprobs through the real sidecar on the scripted model, whose story ends in
// 🦙 made of byte tokens: every top_logprobs entry has exactly N distinct keys (two byte tokens
// that are each part of a character no longer collapse into one "�" key), and a piece that is
// not whole UTF-8 is shown as `bytes:\xNN…`, with its raw bytes on chat logprobs.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "../support/edge.js";
import { STORY } from "../support/scripted.js";

describe("logprobs of byte tokens", () => {
  let stack: Stack;
  let client: OpenAI;
  beforeAll(async () => {
    stack = await startStack();
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it.each([1, 3, 5])("legacy logprobs: %d distinct keys per token, bytes: for part of a character", async (n) => {
    const completion = await client.completions.create({
      model: "m",
      prompt: "Once upon a time",
      logprobs: n,
      temperature: 0,
    });
    const { text, logprobs } = completion.choices[0]!;
    expect(text).toBe(STORY);
    for (const entry of logprobs?.top_logprobs ?? []) expect(Object.keys(entry)).toHaveLength(n);
    const partial = (logprobs?.tokens ?? []).filter((t) => t.startsWith("bytes:"));
    expect(partial.length).toBeGreaterThan(0);
    for (const token of partial) expect(token).toMatch(/^bytes:(\\x[0-9a-f]{2})+$/);
    expect((logprobs?.tokens ?? []).join("")).not.toContain("\uFFFD");
  });

  it("chat logprobs: the same text for part of a character, with its raw bytes", async () => {
    const chat = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "Hi" }],
      logprobs: true,
      top_logprobs: 3,
      temperature: 0,
    });
    const content = chat.choices[0]?.logprobs?.content ?? [];
    const partial = content.filter((entry) => entry.token.startsWith("bytes:"));
    expect(partial.length).toBeGreaterThan(0);
    for (const entry of partial) {
      const hex = entry.token
        .slice("bytes:".length)
        .split("\\x")
        .filter((h) => h !== "");
      expect(hex.map((h) => Number.parseInt(h, 16))).toEqual(entry.bytes);
    }
    for (const entry of content)
      expect(new Set(entry.top_logprobs.map((alt) => alt.token)).size).toBe(entry.top_logprobs.length);
  });
});
