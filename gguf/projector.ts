// The layout of a Gemma 3 vision projector ("mmproj") as llama.cpp's multimodal library reads it:
// a SigLIP-style encoder (patch convolution, learned positions, pre-norm blocks with layer norms and
// a GELU feed-forward, a final layer norm), then Gemma 3's average pooling of the patches, an RMS
// norm and a linear map into the text model's embedding space. Keys and tensor names only: which
// weights go in is the caller's.
import { meta, type MetadataValue, type Tensor } from "./writer.js";

export interface ProjectorShape {
  /** Images are resized to this square first. */
  readonly imageSize: number;
  readonly patchSize: number;
  /** The encoder's width. */
  readonly embedding: number;
  readonly feedForward: number;
  readonly heads: number;
  readonly blocks: number;
  readonly layerNormEpsilon: number;
  /** The text model's embedding length: what each image token becomes. */
  readonly textEmbedding: number;
}

/**
 * Patches per side pooled into one image token: Gemma 3's own factor, which llama.cpp takes when the
 * file names none (`clip.vision.projector.scale_factor`).
 */
export const GEMMA3_POOLING = 4;

/** The image tokens one image becomes: (patches per side / pooling)². */
export function projectorTokens(shape: ProjectorShape): number {
  const side = shape.imageSize / shape.patchSize / GEMMA3_POOLING;
  return side * side;
}

/** Gemma 3's keys (`clip.*`), with SigLIP's normalisation of pixels (mean and spread 0.5 a channel). */
export function projectorMetadata(name: string, shape: ProjectorShape): Array<readonly [string, MetadataValue]> {
  const side = shape.imageSize / shape.patchSize;
  if (!Number.isInteger(side) || side % GEMMA3_POOLING !== 0)
    throw new Error(`mmproj ${name}: ${side} patches a side do not pool by ${GEMMA3_POOLING}`);
  return [
    ["general.architecture", meta.str("clip")],
    ["general.name", meta.str(name)],
    ["general.file_type", meta.u32(0)],
    ["clip.projector_type", meta.str("gemma3")],
    ["clip.has_vision_encoder", meta.bool(true)],
    ["clip.use_gelu", meta.bool(true)],
    ["clip.vision.image_size", meta.u32(shape.imageSize)],
    ["clip.vision.patch_size", meta.u32(shape.patchSize)],
    ["clip.vision.embedding_length", meta.u32(shape.embedding)],
    ["clip.vision.feed_forward_length", meta.u32(shape.feedForward)],
    ["clip.vision.block_count", meta.u32(shape.blocks)],
    ["clip.vision.projection_dim", meta.u32(shape.textEmbedding)],
    ["clip.vision.attention.head_count", meta.u32(shape.heads)],
    ["clip.vision.attention.layer_norm_epsilon", meta.f32(shape.layerNormEpsilon)],
    ["clip.vision.image_mean", meta.f32s([0.5, 0.5, 0.5])],
    ["clip.vision.image_std", meta.f32s([0.5, 0.5, 0.5])],
  ];
}

/** Every tensor, in file order, with its ggml shape (innermost first). */
export function projectorSlots(shape: ProjectorShape): Array<{ readonly name: string; readonly shape: number[] }> {
  const d = shape.embedding;
  const ff = shape.feedForward;
  const patches = (shape.imageSize / shape.patchSize) ** 2;
  const slots = [
    { name: "v.patch_embd.weight", shape: [shape.patchSize, shape.patchSize, 3, d] },
    { name: "v.patch_embd.bias", shape: [d] },
    { name: "v.position_embd.weight", shape: [d, patches] },
  ];
  for (let i = 0; i < shape.blocks; i++) {
    const b = `v.blk.${i}`;
    slots.push(
      { name: `${b}.ln1.weight`, shape: [d] },
      { name: `${b}.attn_q.weight`, shape: [d, d] },
      { name: `${b}.attn_k.weight`, shape: [d, d] },
      { name: `${b}.attn_v.weight`, shape: [d, d] },
      { name: `${b}.attn_out.weight`, shape: [d, d] },
      { name: `${b}.ln2.weight`, shape: [d] },
      // ffn_up reads the encoder's width (its innermost dimension): llama.cpp swaps the two when ffn_down does.
      { name: `${b}.ffn_up.weight`, shape: [d, ff] },
      { name: `${b}.ffn_up.bias`, shape: [ff] },
      { name: `${b}.ffn_down.weight`, shape: [ff, d] },
    );
  }
  slots.push(
    { name: "v.post_ln.weight", shape: [d] },
    { name: "mm.soft_emb_norm.weight", shape: [d] },
    // Read transposed: one column of the text model's width per encoder dimension.
    { name: "mm.input_projection.weight", shape: [shape.textEmbedding, d] },
  );
  return slots;
}

/** The projector's tensors: the given weights by name, every norm ones, every other tensor zeros (all F32). */
export function projectorTensors(shape: ProjectorShape, weights: ReadonlyMap<string, Float32Array>): Tensor[] {
  return projectorSlots(shape).map((slot) => {
    const size = slot.shape.reduce((a, b) => a * b, 1);
    const given = weights.get(slot.name);
    if (given !== undefined && given.length !== size)
      throw new Error(`mmproj tensor ${slot.name}: ${given.length} values for ${size}`);
    const norm = /(ln\d|post_ln|norm)\.weight$/.test(slot.name);
    const data = given ?? new Float32Array(size).fill(norm ? 1 : 0);
    return { name: slot.name, shape: slot.shape, type: "F32", data };
  });
}
