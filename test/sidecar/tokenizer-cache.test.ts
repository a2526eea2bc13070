// The tokenizer that keeps long texts' tokens (sidecar/engine/llama/tokenizer-cache.ts): the same
// tokens as the model's own for every way of tokenizing, the model's tokenizer called once per long
// text, short texts never kept, and the least recently used text out first beyond the bound.
import { getLlama, type LlamaModel, type Token, type Tokenizer } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { CACHED_MIN_CHARS, cachedTokenizer } from "../../sidecar/engine/llama/tokenizer-cache.js";

const long = (seed: number) =>
  Array.from({ length: 400 }, (_, i) => ["river", "<|im_start|>", "lamp", " orbit", "maple"][(i * seed) % 5]).join(" ");

/** `tokenizer`, counting the calls that reach it. */
function counted(tokenizer: Tokenizer): { tokenizer: Tokenizer; calls: string[] } {
  const calls: string[] = [];
  const call = tokenizer as (text: string, special?: boolean, options?: "trimLeadingSpace") => Token[];
  const wrapped = Object.assign((text: string, special?: boolean, options?: "trimLeadingSpace") => {
    calls.push(text);
    return call(text, special, options);
  }, tokenizer);
  return { tokenizer: wrapped as Tokenizer, calls };
}

describe("cachedTokenizer", () => {
  let model: LlamaModel;
  beforeAll(async () => {
    const llama = await getLlama({ gpu: false, build: "never", maxThreads: 1 });
    model = await llama.loadModel({ modelPath: modelPath("random-60m") });
  }, 60_000);
  afterAll(() => model?.dispose());

  it("gives the model's tokens for each way of tokenizing, asking the model once per long text", () => {
    const { tokenizer, calls } = counted(model.tokenizer);
    const cached = cachedTokenizer(tokenizer);
    const ways: [boolean | undefined, "trimLeadingSpace" | undefined][] = [
      [false, undefined],
      [true, undefined],
      [false, "trimLeadingSpace"],
      [undefined, undefined],
    ];
    for (const text of [long(1), ` ${long(3)}`]) {
      expect(text.length).toBeGreaterThanOrEqual(CACHED_MIN_CHARS);
      for (const [special, options] of ways) {
        const fresh = model.tokenize(text, special, options);
        expect(cached(text, special, options)).toEqual(fresh);
        const again = cached(text, special, options);
        expect(again).toEqual(fresh);
        // A copy: changing it changes nothing kept.
        again.push(1 as Token);
        expect(cached(text, special, options)).toEqual(fresh);
      }
    }
    // Special tokens are told apart: the text holds one.
    expect(cached(long(1), true)).not.toEqual(cached(long(1), false));
    // Three ways per text (no special tokens is the default): six calls reached the model.
    expect(calls).toHaveLength(6);
    expect(cached.detokenize(cached(long(1), false))).toBe(model.detokenize(model.tokenize(long(1), false)));
    expect(cached.isEogToken).toBe(model.tokenizer.isEogToken);
  });

  it("keeps no short text, and lets the least recently used go beyond its bound", () => {
    const { tokenizer, calls } = counted(model.tokenizer);
    const cached = cachedTokenizer(tokenizer, 2 * (long(1).length + 2));
    cached("short text");
    cached("short text");
    expect(calls).toEqual(["short text", "short text"]);
    calls.length = 0;
    const [a, b, c] = [long(1), long(2), long(3)];
    cached(a);
    cached(b);
    cached(a);
    // c pushes out the least recently used, b; a stays.
    cached(c);
    cached(a);
    cached(b);
    expect(calls).toEqual([a, b, c, b]);
  });
});
