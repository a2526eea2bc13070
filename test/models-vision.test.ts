// The vision twin (gguf/twins/vision.ts): a scripted Gemma 3 text model and its Gemma 3 projector,
// laid out as llama.cpp's multimodal library reads them, and proven through llama.cpp's own server
// (the default build, .cache/llama.cpp/build-default): no image, a red one, a blue one and any other
// each get their exact reply, over OpenAI's chat API with images as data: URLs.
import { existsSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { peerPaths } from "../bench/peer-paths.js";
import { buildModel, CATALOGUE, ensureModels, projectorPath } from "../gguf/models.js";
import { readGgufHeader } from "../gguf/reader.js";
import { encodeGguf, type MetadataValue } from "../gguf/writer.js";
import { bandsImage, BLUE, dataUrl, GREEN, RED, solidPng } from "./support/images.js";
import { startProcess, type Started } from "./support/processes.js";
import {
  VISION_BLUE,
  VISION_IMAGE_PROMPT_TOKENS,
  VISION_NO_IMAGE,
  VISION_OTHER,
  VISION_RED,
} from "./support/scripted.js";

const value = (metadata: Map<string, MetadataValue>, key: string): unknown => {
  const v = metadata.get(key);
  return v === undefined ? undefined : v.type === "array" ? v.values : v.value;
};

describe("the gemma3-vision files", () => {
  let model: string;
  let projector: string;
  beforeAll(async () => {
    ({ "gemma3-vision": model } = await ensureModels("models", ["gemma3-vision"]));
    projector = projectorPath("gemma3-vision");
  });

  it("the projector has Gemma 3's keys: 64×64 images in 8×8 patches, a 16-wide encoder, the text model's width", () => {
    const text = readGgufHeader(model).metadata;
    const { metadata } = readGgufHeader(projector);
    expect(value(text, "llama.embedding_length")).toBe(128);
    expect(Object.fromEntries([...metadata].map(([key]) => [key, value(metadata, key)]))).toEqual({
      "general.architecture": "clip",
      "general.name": "mmproj-gemma3-vision",
      "general.file_type": 0,
      "clip.projector_type": "gemma3",
      "clip.has_vision_encoder": true,
      "clip.use_gelu": true,
      "clip.vision.image_size": 64,
      "clip.vision.patch_size": 8,
      "clip.vision.embedding_length": 16,
      "clip.vision.feed_forward_length": 32,
      "clip.vision.block_count": 1,
      "clip.vision.projection_dim": 128,
      "clip.vision.attention.head_count": 1,
      "clip.vision.attention.layer_norm_epsilon": Math.fround(1e-6),
      "clip.vision.image_mean": [0.5, 0.5, 0.5],
      "clip.vision.image_std": [0.5, 0.5, 0.5],
    });
  });

  it("the projector's tensors: names, ggml shapes, all F32", () => {
    const { tensors } = readGgufHeader(projector);
    expect(tensors.map((t) => [t.name, t.shape.join("×"), t.type])).toEqual([
      ["v.patch_embd.weight", "8×8×3×16", 0],
      ["v.patch_embd.bias", "16", 0],
      ["v.position_embd.weight", "16×64", 0],
      ["v.blk.0.ln1.weight", "16", 0],
      ["v.blk.0.attn_q.weight", "16×16", 0],
      ["v.blk.0.attn_k.weight", "16×16", 0],
      ["v.blk.0.attn_v.weight", "16×16", 0],
      ["v.blk.0.attn_out.weight", "16×16", 0],
      ["v.blk.0.ln2.weight", "16", 0],
      ["v.blk.0.ffn_up.weight", "16×32", 0],
      ["v.blk.0.ffn_up.bias", "32", 0],
      ["v.blk.0.ffn_down.weight", "32×16", 0],
      ["v.post_ln.weight", "16", 0],
      ["mm.soft_emb_norm.weight", "16", 0],
      ["mm.input_projection.weight", "128×16", 0],
    ]);
  });

  it("the text model has Gemma 3's turn and image markers in their slots, <end_of_turn> its EOS", () => {
    const { metadata } = readGgufHeader(model);
    const tokens = value(metadata, "tokenizer.ggml.tokens") as string[];
    const types = value(metadata, "tokenizer.ggml.token_type") as number[];
    expect(value(metadata, "general.architecture")).toBe("llama");
    for (const [id, text] of [
      [105, "<start_of_turn>"],
      [106, "<end_of_turn>"],
      [255_999, "<start_of_image>"],
      [256_000, "<end_of_image>"],
    ] as const) {
      expect([tokens[id], types[id]]).toEqual([text, 3]);
    }
    expect(value(metadata, "tokenizer.ggml.eos_token_id")).toBe(106);
    expect(value(metadata, "tokenizer.chat_template")).toContain("<start_of_turn>model\n");
  });

  it("the projector is built the same bytes every time", () => {
    const build = CATALOGUE["gemma3-vision"].projector;
    const sha256 = () =>
      createHash("sha256")
        .update(encodeGguf(build(buildModel("gemma3-vision"))))
        .digest("hex");
    expect(sha256()).toBe(sha256());
  });
});

const SERVER = peerPaths("default").binary;
/** Skipped, and says why, where llama-server's default build is missing. */
const SERVER_TITLE = existsSync(SERVER)
  ? "gemma3-vision through llama-server (default build, its mtmd)"
  : `gemma3-vision through llama-server: skipped, no ${SERVER} (npm run bench:peer-build -- --variant default)`;

describe.skipIf(!existsSync(SERVER))(SERVER_TITLE, () => {
  let server: Started;
  let client: OpenAI;
  beforeAll(async () => {
    const { "gemma3-vision": model } = await ensureModels("models", ["gemma3-vision"]);
    server = await startProcess(
      SERVER,
      ["-m", model, "--mmproj", projectorPath("gemma3-vision"), "--host", "127.0.0.1", "--port", "0", "-t", "2"],
      { LD_LIBRARY_PATH: dirname(SERVER) },
      /listening on (http:\/\/127\.0\.0\.1:\d+)/,
    );
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused" });
  });
  afterAll(async () => {
    if (server === undefined || server.child.exitCode !== null) return;
    const exited = new Promise((resolve) => server.child.once("exit", resolve));
    server.child.kill("SIGTERM");
    await exited;
  });

  /** A user turn with a question and the images, answered at temperature 0. */
  async function ask(images: ReadonlyArray<{ readonly data: Buffer; readonly mime?: string }>) {
    const completion = await client.chat.completions.create({
      // llama-server serves the one model it loaded, whatever the name.
      model: "gemma3-vision",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Which colour is this?" },
            ...images.map((image) => ({
              type: "image_url" as const,
              image_url: { url: dataUrl(image.data, image.mime) },
            })),
          ],
        },
      ],
      temperature: 0,
      max_tokens: 32,
    });
    const [choice] = completion.choices;
    return { text: choice?.message.content, finish: choice?.finish_reason, prompt: completion.usage?.prompt_tokens };
  }

  it("no image, a red PNG, a blue PNG, a green PNG: each its exact reply; an image adds 6 prompt tokens", async () => {
    const none = await ask([]);
    expect(none).toMatchObject({ text: VISION_NO_IMAGE, finish: "stop" });
    const replies = [
      [RED, VISION_RED],
      [BLUE, VISION_BLUE],
      [GREEN, VISION_OTHER],
    ] as const;
    for (const [colour, reply] of replies) {
      const answer = await ask([{ data: await solidPng(colour) }]);
      expect(answer).toEqual({ text: reply, finish: "stop", prompt: (none.prompt ?? 0) + VISION_IMAGE_PROMPT_TOKENS });
    }
  });

  it("any size and format is resized: a mostly red (70 %) 100×37 PNG, a mostly blue (60 %) 640×480 JPEG", async () => {
    expect((await ask([{ data: await bandsImage(100, 37, RED, BLUE, 0.7) }])).text).toBe(VISION_RED);
    const jpeg = await bandsImage(640, 480, BLUE, RED, 0.6, "jpeg");
    expect((await ask([{ data: jpeg, mime: "image/jpeg" }])).text).toBe(VISION_BLUE);
  });

  it("of two images, the blue one decides (blue outranks red)", async () => {
    const answer = await ask([{ data: await solidPng(RED) }, { data: await solidPng(BLUE) }]);
    expect(answer.text).toBe(VISION_BLUE);
  });
});
