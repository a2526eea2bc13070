// The multimodal binding (sidecar/native/mtmd.patch, sidecar/engine/llama/multimodal.ts) on the
// local build, with the gemma3-vision twin (gguf/twins/vision.ts): its projector loads for the text
// model, images decode from their files' bytes, a prompt with a marker is cut into its exact chunks,
// the image chunk is evaluated into a sequence, and greedy generation from there gives the twin's
// reply for that image's colour. A media decode takes the context's turn with node-llama-cpp's
// batches; bad bytes, a marker without its image, an abort and a context of another model are
// clear errors that leave the sequence as it was.
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureModels, modelPath, projectorPath } from "../../gguf/models.js";
import { inContextTurn, nativeContext } from "../../sidecar/engine/llama/llama-internals.js";
import { loadLlama } from "../../sidecar/engine/llama/model.js";
import {
  type Chunk,
  decodeMedia,
  evalMediaChunk,
  evalMediaIntoSequence,
  loadProjector,
  type MediaChunk,
  type Projector,
  projectorSupport,
  tokenizeWithMedia,
} from "../../sidecar/engine/llama/multimodal.js";
import { bandsImage, BLUE, GREEN, RED, solidPng } from "../support/images.js";
import { VISION_BLUE, VISION_OTHER, VISION_RED } from "../support/scripted.js";

/** Gemma 3's user turn around `text`, the model's turn opened. */
const turn = (text: string): string => `<start_of_turn>user\n${text}<end_of_turn>\n<start_of_turn>model\n`;
/** A WAV file of `samples` 16-bit mono samples of silence at 16 kHz. */
function silentWav(samples: number): Buffer {
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write("RIFF", 0);
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write("WAVEfmt ", 8);
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(16_000, 24);
  wav.writeUInt32LE(32_000, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write("data", 36);
  wav.writeUInt32LE(samples * 2, 40);
  return wav;
}
/** Any token: it only stands for the image's positions in node-llama-cpp's record of the sequence. */
const PLACEHOLDER = 0 as Token;

let llama: Llama;
let support: ReturnType<typeof projectorSupport> = { available: false, reason: "not loaded yet" };
try {
  llama = await loadLlama("auto");
  support = projectorSupport(llama);
} catch (error) {
  support = { available: false, reason: String(error) };
}
const TITLE = support.available
  ? "the multimodal binding (local build, gemma3-vision)"
  : `the multimodal binding: skipped, ${support.reason}`;

it("a library without the binding says to build the engine", () => {
  const prebuilt = { _bindings: {} } as unknown as Llama;
  expect(projectorSupport(prebuilt)).toEqual({
    available: false,
    reason: expect.stringContaining("npm run build:engine"),
  });
});

describe.skipIf(!support.available)(TITLE, () => {
  let model: LlamaModel;
  let context: LlamaContext;
  let projector: Projector;
  beforeAll(async () => {
    const { "gemma3-vision": file } = await ensureModels("models", ["gemma3-vision"]);
    model = await llama.loadModel({ modelPath: file });
    context = await model.createContext({ sequences: 3, contextSize: 256, threads: 1 });
    projector = await loadProjector(model, projectorPath("gemma3-vision"), { threads: 1 });
  });
  afterAll(async () => {
    await projector?.dispose();
    await context?.dispose();
    await model?.dispose();
  });

  /** The text chunks' tokens evaluated, the image chunk through the binding, then a greedy reply to EOS. */
  async function reply(sequence: LlamaContextSequence, chunks: readonly Chunk[]): Promise<string> {
    const [first, image, last] = chunks;
    if (first?.kind !== "text" || image === undefined || image.kind === "text" || last?.kind !== "text")
      throw new Error("not a text, image, text prompt");
    await sequence.evaluateWithoutGeneratingNewTokens([...first.tokens]);
    expect(await evalMediaIntoSequence(sequence, image, PLACEHOLDER)).toBe(first.nPos + image.nPos);
    const out: Token[] = [];
    for await (const token of sequence.evaluate([...last.tokens], { temperature: 0 })) {
      if (model.isEogToken(token) || out.length >= 32) break;
      out.push(token);
    }
    return model.detokenize(out);
  }

  async function ask(image: Buffer, id: string): Promise<string> {
    const media = await decodeMedia(projector, image, id);
    const prompt = await tokenizeWithMedia(projector, turn(`${projector.marker}Which colour is this?`), [media], {
      addSpecial: true,
    });
    const sequence = context.getSequence();
    try {
      return await reply(sequence, prompt.chunks);
    } finally {
      await sequence.dispose();
      prompt.dispose();
      media.dispose();
    }
  }

  it("loads for the model: vision, no audio, llama.cpp's default marker", () => {
    expect({
      vision: projector.supportsVision,
      audio: projector.supportsAudio,
      rate: projector.audioSampleRate,
      marker: projector.marker,
    }).toEqual({ vision: true, audio: false, rate: -1, marker: "<__media__>" });
  });

  it("decodes PNG, JPEG and GIF (its first frame); WebP, text and nothing are errors", async () => {
    const png = await bandsImage(100, 37, RED, BLUE, 0.7);
    const sizes = [];
    for (const bytes of [png, await sharp(png).jpeg().toBuffer(), await sharp(png).gif().toBuffer()]) {
      const media = await decodeMedia(projector, bytes, "some-hash");
      sizes.push([media.width, media.height, media.isAudio, media.id]);
      media.dispose();
    }
    expect(sizes).toEqual(new Array(3).fill([100, 37, false, "some-hash"]));
    for (const bytes of [await sharp(png).webp().toBuffer(), Buffer.from("not an image"), Buffer.alloc(0)])
      await expect(decodeMedia(projector, bytes, "x")).rejects.toThrow("The media could not be decoded");
    await expect(decodeMedia(projector, png, "big", { maxPixels: 3000 })).rejects.toThrow(
      "The image is 100x37 pixels, over the limit of 3000",
    );
    const fits = await decodeMedia(projector, png, "fits", { maxPixels: 3700 });
    expect(fits.width).toBe(100);
    fits.dispose();
    // Audio goes the same way, for a projector with an audio encoder: this one has none.
    await expect(decodeMedia(projector, silentWav(1600), "wav")).rejects.toThrow("The media could not be decoded");
  });

  it("cuts a prompt into text, image, text: the image's 4 tokens between its start and end tokens", async () => {
    const media = await decodeMedia(projector, await solidPng(RED), "red-hash");
    const prompt = await tokenizeWithMedia(projector, `${projector.marker} what is it?`, [media]);
    const [startOfImage, endOfImage] = [255_999, 256_000];
    expect(prompt.chunks).toEqual([
      { kind: "text", tokens: [startOfImage], nPos: 1 },
      { kind: "image", nTokens: 4, nPos: 4, id: "red-hash" },
      { kind: "text", tokens: [endOfImage, ...model.tokenize(" what is it?")], nPos: 5 },
    ]);
    await expect(tokenizeWithMedia(projector, "no marker", [media])).rejects.toThrow("media markers do not match");
    await expect(tokenizeWithMedia(projector, projector.marker.repeat(2), [media])).rejects.toThrow(
      "media markers do not match",
    );
    prompt.dispose();
    media.dispose();
  });

  it("a red image, a blue one and a green one, each evaluated into a sequence: the twin's exact reply", async () => {
    expect(await ask(await solidPng(RED), "red")).toBe(VISION_RED);
    expect(await ask(await solidPng(BLUE), "blue")).toBe(VISION_BLUE);
    expect(await ask(await solidPng(GREEN), "green")).toBe(VISION_OTHER);
    expect(await ask(await bandsImage(640, 480, BLUE, RED, 0.6, "jpeg"), "jpeg")).toBe(VISION_BLUE);
  });

  it("two images into two sequences at once, beside each other's decodes: each its own reply", async () => {
    const [red, blue] = await Promise.all([ask(await solidPng(RED), "r"), ask(await solidPng(BLUE), "b")]);
    expect([red, blue]).toEqual([VISION_RED, VISION_BLUE]);
  });

  it("one prompt's image into two sequences at once (a request's choices): encoded once, both reply", async () => {
    const media = await decodeMedia(projector, await solidPng(RED), "shared");
    const prompt = await tokenizeWithMedia(projector, turn(`${projector.marker}Which colour is this?`), [media], {
      addSpecial: true,
    });
    const sequences = [context.getSequence(), context.getSequence()];
    try {
      expect(await Promise.all(sequences.map((sequence) => reply(sequence, prompt.chunks)))).toEqual([
        VISION_RED,
        VISION_RED,
      ]);
    } finally {
      await Promise.all(sequences.map((sequence) => sequence.dispose()));
      prompt.dispose();
      media.dispose();
    }
  });

  it("a media decode takes the context's turn, the one node-llama-cpp's batches take", async () => {
    const media = await decodeMedia(projector, await solidPng(BLUE), "blue");
    const prompt = await tokenizeWithMedia(projector, turn(`${projector.marker}Which colour is this?`), [media], {
      addSpecial: true,
    });
    const [first, image] = prompt.chunks as [Chunk & { kind: "text" }, MediaChunk];
    const [sequence, busy] = [context.getSequence(), context.getSequence()];
    const settled: string[] = [];
    try {
      await sequence.evaluateWithoutGeneratingNewTokens([...first.tokens]);
      let media: Promise<number> | undefined;
      let text: Promise<void> | undefined;
      await inContextTurn(context, async () => {
        media = evalMediaIntoSequence(sequence, image, PLACEHOLDER).then((end) => {
          settled.push("media");
          return end;
        });
        text = busy.evaluateWithoutGeneratingNewTokens(model.tokenize("Hello")).then(() => void settled.push("text"));
        await new Promise((resolve) => setTimeout(resolve, 300));
        settled.push("turn given back");
      });
      expect(await media).toBe(first.nPos + image.nPos);
      await text;
      expect(settled[0]).toBe("turn given back");
      expect(settled.slice(1).sort()).toEqual(["media", "text"]);
    } finally {
      await Promise.all([sequence.dispose(), busy.dispose()]);
      prompt.dispose();
      media.dispose();
    }
  });

  it("an abort, another model's context, a position out of place: errors, the sequence as it was", async () => {
    const media = await decodeMedia(projector, await solidPng(RED), "red");
    const prompt = await tokenizeWithMedia(projector, turn(`${projector.marker}Which colour is this?`), [media], {
      addSpecial: true,
    });
    const image = prompt.chunks[1] as MediaChunk;
    const sequence = context.getSequence();
    const other = await llama.loadModel({ modelPath: modelPath("scripted") });
    const otherContext = await other.createContext({ sequences: 1, contextSize: 64, threads: 1 });
    try {
      await expect(evalMediaChunk(otherContext, 0, image, 0)).rejects.toThrow("not of the projector's model");
      await expect(evalMediaIntoSequence(sequence, image, PLACEHOLDER, AbortSignal.abort())).rejects.toThrow("aborted");
      const id = (sequence as unknown as { _sequenceId: number })._sequenceId;
      await sequence.evaluateWithoutGeneratingNewTokens(model.tokenize("a few words of text"));
      const held = sequence.nextTokenIndex;
      const native = nativeContext(context) as { getSequenceKvCacheMaxPosition(id: number): number };
      expect(native.getSequenceKvCacheMaxPosition(id)).toBe(held - 1);
      // Position 0 again, over cells the sequence holds: llama.cpp refuses it.
      await expect(evalMediaChunk(context, id, image, 0)).rejects.toThrow("could not be evaluated");
      prompt.abort();
      await expect(evalMediaIntoSequence(sequence, image, PLACEHOLDER)).rejects.toThrow("aborted");
      expect([sequence.nextTokenIndex, native.getSequenceKvCacheMaxPosition(id)]).toEqual([held, held - 1]);
    } finally {
      await sequence.dispose();
      await otherContext.dispose();
      await other.dispose();
      prompt.dispose();
      media.dispose();
    }
  });
});
