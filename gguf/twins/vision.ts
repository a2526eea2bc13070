// The vision twin: a scripted text model with Gemma 3's turns and image markers, and a Gemma 3
// vision projector (projector.ts) whose weights steer what an image becomes, so that llama.cpp's
// multimodal library reads real pixels and the reply says which image it was given.
//
// The text model is a contextual scripted model (scripted.ts) with three modes whose triggers are
// unused tokens of the vocabulary; the projector turns a mostly red image into tokens whose
// embedding is exactly the "red" trigger's, a mostly blue one into the "blue" trigger's, any other
// image into the "other" trigger's, so the mode head reads an image as it reads a trigger token.
//
// The projector's encoder (width 16) keeps every value in a ± pair, so each layer norm only scales:
// - the patch convolution writes the patch's mean (red − blue) / 2 (pixels normalised to −1 … 1) into
//   dimensions 2 / 3 and the bias a constant 1 into 0 / 1;
// - the block's attention (query and key zero: every patch reads all of them alike) averages that
//   colour over the whole image into 4 / 5;
// - its feed-forward turns the average's sign into a decision, 1 or 0: red into 6 / 7, blue into
//   8 / 9 (GELU is exact past ±10: (gelu(a·x) − gelu(a·x − 10)) / 10 is 1 for a·x ≥ 20, 0 for a·x ≤ −10;
//   a·x ≈ 800·(red − blue) / 255 here, so 7 levels of difference decide exactly);
// - the projection maps constant, red and blue to the "other" trigger's embedding, and red and blue
//   to their trigger's minus it, so that after the final RMS norm an image token points exactly where
//   its trigger's embedding does.
import type { FamilyVocabSpec } from "../family-vocab.js";
import { projectorMetadata, projectorTensors, type ProjectorShape } from "../projector.js";
import type { ContextualSpec } from "../scripted.js";
import { fromFloat16Bits, type GgufFile, type MetadataValue, type Tensor } from "../writer.js";
import { llamaTemplate } from "./parts.js";

/**
 * Gemma 3's tokenizer: llama.cpp's `ggml-vocab-gemma-4.gguf` (the same 262,144 slots) with Gemma 3's
 * names in the slots Gemma 4 renamed: the turn markers and the image markers the projector's images
 * are wrapped in; `<end_of_turn>` ends a turn.
 */
export const GEMMA3_VOCAB: FamilyVocabSpec = {
  file: "gemma-4",
  eos: "<end_of_turn>",
  added: {
    105: ["<start_of_turn>", 3],
    106: ["<end_of_turn>", 3],
    255999: ["<start_of_image>", 3],
    256000: ["<end_of_image>", 3],
  },
};

/** What the twin answers: no image, a mostly red one, a mostly blue one, any other image. */
export const VISION_REPLIES = {
  none: "I see no image.",
  red: "The image is red.",
  blue: "The image is blue.",
  other: "The image is neither red nor blue.",
} as const;

/** The modes' triggers (unused tokens, which no text reaches), by increasing priority. */
const TRIGGERS = { other: "<unused0>", red: "<unused1>", blue: "<unused2>" } as const;

/**
 * The text model: Gemma's turns (`google-gemma-2-2b-it.jinja`, the template Gemma 3 keeps for
 * text: `<start_of_turn>user\n…<end_of_turn>\n<start_of_turn>model\n`), Gemma 3's tokenizer, and
 * after the prompt the reply VISION_REPLIES names, then `<end_of_turn>`.
 */
export function gemma3VisionSpec(): ContextualSpec {
  const answer = (mode: "red" | "blue" | "other") =>
    ({ mode, after: ["\n"], reply: VISION_REPLIES[mode], end: "<end_of_turn>" }) as const;
  return {
    name: "gemma3-vision",
    chatTemplate: llamaTemplate("google-gemma-2-2b-it.jinja"),
    architecture: "llama",
    vocabulary: GEMMA3_VOCAB,
    userDefined: [],
    modes: [
      { name: "other", trigger: TRIGGERS.other },
      { name: "red", trigger: TRIGGERS.red },
      { name: "blue", trigger: TRIGGERS.blue },
    ],
    scripts: [
      { after: ["\n"], reply: VISION_REPLIES.none, end: "<end_of_turn>" },
      answer("red"),
      answer("blue"),
      answer("other"),
    ],
  };
}

/** The projector's size: 64×64 pixels in 8×8 patches, pooled 4×4 into 4 image tokens. */
export const VISION_PROJECTOR: Omit<ProjectorShape, "textEmbedding"> = {
  imageSize: 64,
  patchSize: 8,
  embedding: 16,
  feedForward: 32,
  heads: 1,
  blocks: 1,
  layerNormEpsilon: 1e-6,
};

/** The encoder's dimensions (each the first of a ± pair) and the decision's gain. */
const DIM = { constant: 0, colour: 2, average: 4, red: 6, blue: 8 } as const;
const GAIN = 100;
const STEP = 10;

/** The embedding row of a token of the text model, by its text. */
function embeddingRow(model: GgufFile, token: string): Float32Array {
  const tokens = model.metadata.find(([key]) => key === "tokenizer.ggml.tokens")?.[1] as MetadataValue | undefined;
  const id = tokens?.type === "array" && tokens.itemType === "string" ? tokens.values.indexOf(token) : -1;
  const table = model.tensors.find((t) => t.name === "token_embd.weight") as Tensor | undefined;
  if (id < 0 || table === undefined) throw new Error(`the vision twin has no embedding for ${token}`);
  const width = table.shape[0] as number;
  const row = table.data.subarray(id * width, (id + 1) * width);
  return Float32Array.from(row, (v) => (table.type === "F16" ? fromFloat16Bits(v) : v));
}

/** Patch convolution and bias: (red − blue) / 2 of the patch's mean, and the constant, each as a ± pair. */
function patchWeights(p: number, d: number): Map<string, Float32Array> {
  const kernel = new Float32Array(p * p * 3 * d);
  const at = (out: number, channel: number) => (out * 3 + channel) * p * p;
  for (const [out, sign] of [
    [DIM.colour, 1],
    [DIM.colour + 1, -1],
  ] as const) {
    kernel.fill(sign / (2 * p * p), at(out, 0), at(out, 0) + p * p);
    kernel.fill(-sign / (2 * p * p), at(out, 2), at(out, 2) + p * p);
  }
  const bias = new Float32Array(d);
  bias[DIM.constant] = 1;
  bias[DIM.constant + 1] = -1;
  return new Map([
    ["v.patch_embd.weight", kernel],
    ["v.patch_embd.bias", bias],
  ]);
}

/** The block: attention averages the colour over every patch; the feed-forward decides red or blue. */
function blockWeights(d: number, ff: number): Map<string, Float32Array> {
  const value = new Float32Array(d * d);
  value[0 * d + DIM.colour] = 1;
  const out = new Float32Array(d * d);
  out[DIM.average * d + 0] = 1;
  out[(DIM.average + 1) * d + 0] = -1;
  const up = new Float32Array(d * ff);
  const upBias = new Float32Array(ff);
  const down = new Float32Array(ff * d);
  // Units 0–1 fire for red (a positive average), 2–3 for blue.
  for (const [unit, gain, bias] of [
    [0, GAIN, 0],
    [1, GAIN, -STEP],
    [2, -GAIN, 0],
    [3, -GAIN, -STEP],
  ] as const) {
    up[unit * d + DIM.average] = gain;
    upBias[unit] = bias;
    const target = unit < 2 ? DIM.red : DIM.blue;
    const sign = unit % 2 === 0 ? 1 : -1;
    down[target * ff + unit] = sign / STEP;
    down[(target + 1) * ff + unit] = -sign / STEP;
  }
  return new Map([
    ["v.blk.0.attn_v.weight", value],
    ["v.blk.0.attn_out.weight", out],
    ["v.blk.0.ffn_up.weight", up],
    ["v.blk.0.ffn_up.bias", upBias],
    ["v.blk.0.ffn_down.weight", down],
  ]);
}

/** Columns of the projection: constant → "other", red → "red" − "other", blue → "blue" − "other". */
function projectionWeights(model: GgufFile, d: number): { weight: Float32Array; textEmbedding: number } {
  const other = embeddingRow(model, TRIGGERS.other);
  const textEmbedding = other.length;
  const weight = new Float32Array(textEmbedding * d);
  weight.set(other, DIM.constant * textEmbedding);
  for (const [dim, trigger] of [
    [DIM.red, TRIGGERS.red],
    [DIM.blue, TRIGGERS.blue],
  ] as const) {
    const row = embeddingRow(model, trigger);
    weight.set(
      row.map((v, i) => v - (other[i] as number)),
      dim * textEmbedding,
    );
  }
  return { weight, textEmbedding };
}

/** The projector for the built text model (its trigger tokens' embedding rows). */
export function gemma3VisionProjector(model: GgufFile): GgufFile {
  const { embedding: d, feedForward: ff, patchSize } = VISION_PROJECTOR;
  const { weight, textEmbedding } = projectionWeights(model, d);
  const shape: ProjectorShape = { ...VISION_PROJECTOR, textEmbedding };
  const weights = new Map([
    ...patchWeights(patchSize, d),
    ...blockWeights(d, ff),
    ["mm.input_projection.weight", weight],
  ]);
  return { metadata: projectorMetadata("mmproj-gemma3-vision", shape), tensors: projectorTensors(shape, weights) };
}
