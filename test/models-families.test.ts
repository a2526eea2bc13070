// The family twins' real tokenizers (gguf/family-vocab.ts): the file's tokenizer metadata carried
// over unchanged but for the renamed placeholder slots and the family's end of turn, and every
// scripted reply cut into that vocabulary's tokens so that they spell the reply exactly.
import { describe, expect, it } from "vitest";
import { familyVocab, vocabMetadata } from "../gguf/family-vocab.js";
import {
  GEMMA4_VOCAB,
  gemma4Spec,
  GPT_OSS_VOCAB,
  gptOssSpec,
  LLAMA3_VOCAB,
  llama3Spec,
  qwen3CoderSpec,
  qwen35Spec,
  qwen3Spec,
} from "../gguf/models.js";
import { buildContextualModel, type ContextualSpec } from "../gguf/scripted.js";
import { QWEN3_VOCAB } from "../gguf/twins/parts.js";
import type { MetadataValue } from "../gguf/writer.js";

const metaValue = (value: MetadataValue | undefined): unknown =>
  value?.type === "array" ? value.values : value?.value;

describe.each([
  { spec: qwen3CoderSpec, vocab: QWEN3_VOCAB, end: "<|im_end|>", endId: 151_645 },
  { spec: qwen3Spec, vocab: QWEN3_VOCAB, end: "<|im_end|>", endId: 151_645 },
  { spec: qwen35Spec, vocab: { ...QWEN3_VOCAB, file: "qwen35" }, end: "<|im_end|>", endId: 151_645 },
  { spec: llama3Spec, vocab: LLAMA3_VOCAB, end: "<|eot_id|>", endId: 128_009 },
  { spec: gptOssSpec, vocab: GPT_OSS_VOCAB, end: "<|return|>", endId: 200_002 },
  { spec: gemma4Spec, vocab: GEMMA4_VOCAB, end: "<turn|>", endId: 106 },
])("a twin on a family's tokenizer", ({ spec, vocab, end, endId }) => {
  const twin: ContextualSpec = spec();
  const built = buildContextualModel(twin);
  const metadata = new Map(built.file.metadata);
  const file = vocabMetadata(vocab);

  it(`${twin.name}: the file's tokenizer, with the family's added tokens and ${end} as EOS`, () => {
    for (const key of [
      "tokenizer.ggml.model",
      "tokenizer.ggml.pre",
      "tokenizer.ggml.merges",
      "tokenizer.ggml.bos_token_id",
    ]) {
      expect(metaValue(metadata.get(key)), key).toEqual(metaValue(file.get(key)));
    }
    const tokens = metaValue(metadata.get("tokenizer.ggml.tokens")) as string[];
    const original = metaValue(file.get("tokenizer.ggml.tokens")) as string[];
    const changed = tokens.flatMap((t, id) => (t === original[id] ? [] : [[id, t]]));
    expect(changed).toEqual(Object.entries(vocab.added ?? {}).map(([id, [text]]) => [Number(id), text]));
    expect([metaValue(metadata.get("tokenizer.ggml.eos_token_id")), tokens[endId]]).toEqual([endId, end]);
    expect(metaValue(metadata.get("tokenizer.chat_template"))).toBe(twin.chatTemplate);
  });

  it(`${twin.name}: each reply's tokens spell it exactly, then its end (${end}, or the call's)`, () => {
    const v = familyVocab(vocab);
    twin.scripts.forEach((script, i) => {
      const ids = built.scripts[i]?.tokenIds ?? [];
      const reply = typeof script.reply === "string" ? script.reply : script.reply.join("");
      if (script.end === "continue") expect(v.decode(ids)).toBe(reply);
      else
        expect([v.decode(ids.slice(0, -1)), ids.at(-1)]).toEqual([
          reply,
          script.end === "eos" || script.end === "im_end" ? endId : v.endId(script.end),
        ]);
    });
  });
});
