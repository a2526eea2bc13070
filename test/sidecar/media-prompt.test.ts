// Images through the sidecar over native gRPC with the gemma3-vision twin (its projector found beside it): a chat's
// media parts are decoded by the model's projector and evaluated where they stand, so the twin answers which image it
// was given; image tokens count in the prompt and in Tokenize; the prefix cache compares images by content (the same
// image again is not evaluated again, another one never reuses its cells); a broken image, a WebP file, several
// choices and a model without a projector each behave as docs/contract.md says.
import { Code, ConnectError } from "@connectrpc/connect";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GenerateResponse, Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { ensureModels } from "../../gguf/models.js";
import { loadLlama } from "../../sidecar/engine/llama/model.js";
import { projectorSupport } from "../../sidecar/engine/llama/multimodal.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { BLUE, GREEN, RED, solidPng } from "../support/images.js";
import {
  VISION_BLUE,
  VISION_IMAGE_PROMPT_TOKENS,
  VISION_NO_IMAGE,
  VISION_OTHER,
  VISION_RED,
} from "../support/scripted.js";
import { startSidecarProcess, type Started } from "../support/processes.js";
import { clientsFor, collect, replyText, startTestSidecar, type InferenceClient } from "../support/sidecar.js";

const support = projectorSupport(await loadLlama("auto"));
const TITLE = support.available
  ? "images through the sidecar (gemma3-vision)"
  : `images through the sidecar: skipped, ${support.reason}`;

type Part = {
  part: { case: "text"; value: string } | { case: "media"; value: { data: Uint8Array; mimeType: string } };
};
const text = (value: string): Part => ({ part: { case: "text", value } });
const image = (data: Uint8Array, mimeType = "image/png"): Part => ({
  part: { case: "media", value: { data, mimeType } },
});

describe.skipIf(!support.available)(TITLE, () => {
  let sidecar: RunningSidecar;
  let client: InferenceClient;
  let red: Buffer;
  let blue: Buffer;
  beforeAll(async () => {
    const { "gemma3-vision": model } = await ensureModels("models", ["gemma3-vision"]);
    sidecar = await startTestSidecar({ model, contextSize: 1024 });
    client = clientsFor(sidecar.url).grpc;
    red = await solidPng(RED);
    blue = await solidPng(BLUE);
  }, 120_000);
  afterAll(() => sidecar?.stop());

  const ask = (parts: Part[], extra: object = {}) =>
    collect(
      client.generate({
        input: { case: "chat", value: { messages: [{ role: Role.USER, parts }] } },
        sampling: { temperature: 0 },
        maxTokens: 32,
        ...extra,
      }),
    );
  const startOf = (events: GenerateResponse["event"][]) => {
    const start = events.find((e) => e.case === "start");
    if (start?.case !== "start") throw new Error("no start event");
    return start.value;
  };
  const refusal = (events: Promise<unknown>) =>
    events.then(
      () => undefined,
      (e: unknown) => [ConnectError.from(e).code, ConnectError.from(e).rawMessage],
    );

  it("the model reads images (ModelInfo.modalities)", async () => {
    const { models } = await client.listModels({});
    expect(models.find((m) => m.id === "gemma3-vision")?.modalities).toEqual(["image"]);
  });

  it("no image, red, blue, green: exact replies; image tokens in the prompt and Tokenize", async () => {
    const none = await ask([text("Which colour is this?")]);
    expect(replyText(none)).toBe(VISION_NO_IMAGE);
    const replies = [
      [RED, VISION_RED],
      [BLUE, VISION_BLUE],
      [GREEN, VISION_OTHER],
    ] as const;
    for (const [colour, reply] of replies) {
      const parts = [text("Which colour is this?"), image(await solidPng(colour))];
      const events = await ask(parts);
      expect(replyText(events)).toBe(reply);
      expect(startOf(events).promptTokens).toBe(startOf(none).promptTokens + VISION_IMAGE_PROMPT_TOKENS);
      const counted = await client.tokenize({
        input: { case: "chat", value: { messages: [{ role: Role.USER, parts }] } },
      });
      expect(counted.tokens.length).toBe(startOf(events).promptTokens);
    }
  });

  it("the same image again is read from the cache; another image after the same text is evaluated", async () => {
    const parts = (data: Buffer) => [text("Describe the cache test image, please."), image(data), text("Thanks.")];
    const first = await ask(parts(red));
    expect(replyText(first)).toBe(VISION_RED);
    const again = await ask(parts(red));
    expect(replyText(again)).toBe(VISION_RED);
    expect(startOf(again).cachedTokens).toBe(startOf(again).promptTokens - 1);
    const other = await ask(parts(blue));
    expect(replyText(other)).toBe(VISION_BLUE);
    // The text before the image is shared; the image's cells are not.
    const cached = startOf(other).cachedTokens;
    expect(cached).toBeGreaterThan(0);
    expect(cached).toBeLessThan(startOf(other).promptTokens - VISION_IMAGE_PROMPT_TOKENS);
  });

  it("with tools the template has no syntax for, the chat wrapper's prompt carries the image", async () => {
    const tools = [{ name: "read_file", description: "Reads a file.", parameters: '{"type":"object"}' }];
    const messages = [
      { role: Role.SYSTEM, parts: [text("You are terse.")] },
      { role: Role.USER, parts: [text("Which colour is this?"), image(red)] },
    ];
    for (const [withTools, reply] of [
      [tools, VISION_RED],
      [[], VISION_RED],
    ] as const) {
      const events = await collect(
        client.generate({
          input: { case: "chat", value: { messages, tools: [...withTools] } },
          sampling: { temperature: 0 },
          maxTokens: 32,
        }),
      );
      expect(replyText(events)).toBe(reply);
    }
  });

  it("two choices of one image both read it", async () => {
    const events = await ask([text("Which colour?"), image(blue)], { n: 2, sampling: { temperature: 0, seed: 1 } });
    const texts = [0, 1].map((choice) =>
      events
        .filter((e) => e.case === "token" && e.value.choice === choice)
        .map((e) => (e.case === "token" ? e.value.text : ""))
        .join(""),
    );
    expect(texts).toEqual([VISION_BLUE, VISION_BLUE]);
  });

  it("a WebP image is read (converted before decoding); a GIF's first frame is read", async () => {
    const webp = await sharp(red).webp({ lossless: true }).toBuffer();
    expect(replyText(await ask([text("Which colour?"), image(webp, "image/webp")]))).toBe(VISION_RED);
    const gif = await sharp(blue).gif().toBuffer();
    expect(replyText(await ask([text("Which colour?"), image(gif, "image/gif")]))).toBe(VISION_BLUE);
  });

  it("a broken image is INVALID_ARGUMENT naming its part; the model answers the next request", async () => {
    const broken = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const answer = await refusal(ask([text("Which colour?"), image(broken)]));
    expect(answer?.[0]).toBe(Code.InvalidArgument);
    expect(answer?.[1]).toMatch(/^messages\[0\]\.parts\[1\] could not be read as an image or a sound: /);
    expect(replyText(await ask([text("Which colour?"), image(red)]))).toBe(VISION_RED);
  });

  it("prompt log-probabilities over media are refused", async () => {
    expect(await refusal(ask([text("Which colour?"), image(red)], { promptLogprobs: true }))).toEqual([
      Code.InvalidArgument,
      "the prompt's log-probabilities cannot be scored over media: drop one of them",
    ]);
  });
});

// node-llama-cpp keeps one library per process: the prebuilt one runs in a sidecar process of its own.
describe("images on the prebuilt engine (no multimodal library)", () => {
  let sidecar: Started;
  beforeAll(async () => {
    const { "gemma3-vision": model } = await ensureModels("models", ["gemma3-vision"]);
    sidecar = await startSidecarProcess(model, ["--engine", "prebuilt", "--threads", "1", "--context-size", "512"]);
  }, 120_000);
  afterAll(() => {
    if (sidecar !== undefined && sidecar.child.exitCode === null) sidecar.child.kill("SIGKILL");
  });
  it("an image is INVALID_ARGUMENT saying how to get the engine build; text is answered", async () => {
    const client = clientsFor(sidecar.url).grpc;
    const ask = (parts: Part[]) =>
      collect(
        client.generate({
          input: { case: "chat", value: { messages: [{ role: Role.USER, parts }] } },
          sampling: { temperature: 0 },
          maxTokens: 32,
        }),
      );
    const error = await ask([text("Which colour?"), image(await solidPng(RED))]).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(error?.rawMessage).toBe(
      'model "gemma3-vision" cannot read media with this engine (images and audio need the local llama.cpp build ' +
        "with the project's engine patches (`npm run build:engine`, then `--engine auto` or `local`): the loaded " +
        "library has no multimodal binding): messages[0].parts[1] is media",
    );
    expect(replyText(await ask([text("Which colour is this?")]))).toBe(VISION_NO_IMAGE);
    const { models } = await client.listModels({});
    expect(models.find((m) => m.id === "gemma3-vision")?.modalities).toEqual([]);
  });
});

describe.skipIf(!support.available)(`${TITLE}: the KV tier keys saved states by image`, () => {
  let sidecar: RunningSidecar;
  let client: InferenceClient;
  beforeAll(async () => {
    const { "gemma3-vision": model } = await ensureModels("models", ["gemma3-vision"]);
    sidecar = await startTestSidecar({ model, contextSize: 1024, sequences: 1, cacheRam: 64 });
    client = clientsFor(sidecar.url).grpc;
  }, 120_000);
  afterAll(() => sidecar?.stop());

  const ask = async (parts: Part[]) => {
    const events = await collect(
      client.generate({
        input: { case: "chat", value: { messages: [{ role: Role.USER, parts }] } },
        sampling: { temperature: 0 },
        maxTokens: 32,
      }),
    );
    const start = events.find((e) => e.case === "start");
    if (start?.case !== "start") throw new Error("no start event");
    return { text: replyText(events), prompt: start.value.promptTokens, cached: start.value.cachedTokens };
  };
  const long = "Please look at this picture carefully before you answer. ".repeat(8);

  it("a state saved with an image is restored for that image only", async () => {
    const [red, blue] = [await solidPng(RED), await solidPng(BLUE)];
    const withImage = (data: Buffer) => [text(long), image(data), text("Which colour is it?")];
    const first = await ask(withImage(red));
    expect(first).toMatchObject({ text: VISION_RED, cached: 0 });
    expect(first.prompt).toBeGreaterThan(64);
    // Another prompt takes the one sequence: the first one's state goes to the tier.
    expect((await ask([text("Something else entirely, with no picture at all. ".repeat(8))])).text).toBe(
      VISION_NO_IMAGE,
    );
    expect(await ask(withImage(red))).toEqual({ text: VISION_RED, prompt: first.prompt, cached: first.prompt - 1 });
    const other = await ask(withImage(blue));
    expect(other.text).toBe(VISION_BLUE);
    expect(other.cached).toBeGreaterThan(64);
    expect(other.cached).toBeLessThan(first.prompt - VISION_IMAGE_PROMPT_TOKENS);
  });
});
