// What the family twins share: their templates (llama.cpp's own, from the source bundle) and the
// words every twin writes, which the tests compare replies with.
import { llamaTemplates } from "../llama-source.js";
import type { FamilyVocabSpec } from "../family-vocab.js";
import type { ContextualScript } from "../scripted.js";

/** One of llama.cpp's chat templates, by file name (a twin's). */
export function llamaTemplate(name: string): string {
  const template = llamaTemplates().get(name);
  if (template === undefined) throw new Error(`llama.cpp's ${name} is missing from the source bundle`);
  return template;
}

/**
 * Qwen's tokenizer as Qwen2.5 and Qwen3 ship it: llama.cpp's `ggml-vocab-qwen2.gguf` (Qwen2's, whose
 * added slots are still `[PAD…]` placeholders) with the later releases' added tokens in those
 * slots, `<|im_end|>` ending a turn.
 */
export const QWEN3_VOCAB: FamilyVocabSpec = {
  file: "qwen2",
  eos: "<|im_end|>",
  added: Object.fromEntries(
    (
      [
        ...[
          "object_ref_start",
          "object_ref_end",
          "box_start",
          "box_end",
          "quad_start",
          "quad_end",
          "vision_start",
          "vision_end",
        ].map((n) => [`<|${n}|>`, 3]),
        ...["vision_pad", "image_pad", "video_pad"].map((n) => [`<|${n}|>`, 3]),
        ["<tool_call>", 4],
        ["</tool_call>", 4],
        ...["fim_prefix", "fim_middle", "fim_suffix", "fim_pad", "repo_name", "file_sep"].map((n) => [`<|${n}|>`, 4]),
        ["<tool_response>", 4],
        ["</tool_response>", 4],
        ["<think>", 4],
        ["</think>", 4],
      ] as [string, number][]
    ).map(([text, type], i) => [151_646 + i, [text, type] as const]),
  ),
};

/** The reasoning every reasoning twin writes before its answer or its call. */
export const TWIN_REASONING = "Checking.";

/** Every twin's answer to a tool result. */
export const QWEN3_CODER_ANSWER = "It is sunny in Tokyo.";

/** The question a twin answers with two calls in one reply (the cities are its own: the question names none). */
export const TWO_CALLS_ASK = "Weather in both capitals?";
/** The cities of the two calls, in order. */
export const TWO_CALLS_CITIES = ["Berlin", "Boston"] as const;

/** How a family writes two calls in one reply, in the twin's pieces. */
export interface TwoCallsSyntax {
  /** The prompt's last piece(s), where the reply begins. */
  readonly after: string | readonly string[];
  /** What comes before the first call (reasoning, a block's opening); none by default. */
  readonly lead?: readonly string[];
  /** One call of get_weather up to its city's piece (the last), which names the call to the model. */
  readonly call: (city: string) => readonly string[];
  /** After a call's city: the rest of the call. */
  readonly callEnd: readonly string[];
  readonly between: readonly string[];
  /** After the last call (a block's closing); none by default. */
  readonly close?: readonly string[];
  /** The end of the turn. */
  readonly end: string;
}

type Mode = { readonly name: string; readonly trigger: string };

/**
 * The modes (after a twin's "tools", before its "result") and scripts of two calls in one reply:
 * " capitals" in the question → the first call (Berlin); the piece holding "Berlin" the model wrote →
 * the rest of it and the second call (Boston); the piece holding "Boston" → the end of the turn.
 */
export function twoCalls(syntax: TwoCallsSyntax): { modes: Mode[]; scripts: ContextualScript[] } {
  const [first, second] = TWO_CALLS_CITIES;
  const one = syntax.call(first);
  const two = syntax.call(second);
  const last = (pieces: readonly string[]): string => pieces.at(-1) as string;
  return {
    modes: [
      { name: "two", trigger: " capitals" },
      { name: "first-written", trigger: last(one) },
      { name: "second-written", trigger: last(two) },
    ],
    scripts: [
      { mode: "two", after: syntax.after, reply: [...(syntax.lead ?? []), ...one], end: "continue" },
      {
        mode: "first-written",
        after: [last(one)],
        reply: [...syntax.callEnd, ...syntax.between, ...two],
        end: "continue",
      },
      {
        mode: "second-written",
        after: [last(two)],
        reply: [...syntax.callEnd, ...(syntax.close ?? [])],
        end: syntax.end,
      },
    ],
  };
}
