// Images on every protocol, end to end: the gemma3-vision twin (its projector found beside it) behind the real
// sidecar and the real edge (Node and workerd), through the official `openai`, `@anthropic-ai/sdk` and `ollama`
// clients: OpenAI chat `image_url` parts, Responses `input_image` (a data: URL, and a `file_id` from the Files API),
// Anthropic `image` blocks and Ollama `images` each get the twin's exact reply for the image's colour, with the
// image's tokens in usage and in count_tokens; the same image sent again is read from the cache; a broken image and
// an image to a text-only model are 400s naming the part.
import Anthropic from "@anthropic-ai/sdk";
import { Ollama } from "ollama";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ensureModels } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { BLUE, dataUrl, GREEN, RED, solidPng } from "../support/images.js";
import { describeOnRuntimes } from "../support/runtimes.js";
import {
  VISION_BLUE,
  VISION_IMAGE_PROMPT_TOKENS,
  VISION_NO_IMAGE,
  VISION_OTHER,
  VISION_RED,
} from "../support/scripted.js";
import { startCatalogue } from "../support/catalogue.js";

let sidecar: RunningSidecar;
let red: Buffer;
let blue: Buffer;
let green: Buffer;
beforeAll(async () => {
  const { "gemma3-vision": vision, scripted } = await ensureModels("models", ["gemma3-vision", "scripted"]);
  sidecar = await startCatalogue([vision, scripted], { contextSize: 1024, sequences: 2 });
  [red, blue, green] = await Promise.all([solidPng(RED), solidPng(BLUE), solidPng(GREEN)]);
}, 180_000);
afterAll(() => sidecar?.stop());

const MODEL = "gemma3-vision";
const QUESTION = "Which colour is this?";

describeOnRuntimes(
  "images on every protocol",
  () => [sidecar.url],
  (edge) => {
    const openai = () => new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: "none", maxRetries: 0 });
    const anthropic = () => new Anthropic({ baseURL: edge().url, apiKey: "none", maxRetries: 0 });
    const chat = (image: Buffer | undefined, model = MODEL) =>
      openai().chat.completions.create({
        model,
        temperature: 0,
        max_tokens: 32,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: QUESTION },
              ...(image === undefined ? [] : [{ type: "image_url" as const, image_url: { url: dataUrl(image) } }]),
            ],
          },
        ],
      });

    it("chat completions: no image, red, blue, green each its exact reply, image tokens in usage", async () => {
      const none = await chat(undefined);
      expect(none.choices[0]?.message.content).toBe(VISION_NO_IMAGE);
      for (const [image, reply] of [
        [red, VISION_RED],
        [blue, VISION_BLUE],
        [green, VISION_OTHER],
      ] as const) {
        const completion = await chat(image);
        expect(completion.choices[0]?.message.content).toBe(reply);
        expect(completion.usage?.prompt_tokens).toBe((none.usage?.prompt_tokens ?? 0) + VISION_IMAGE_PROMPT_TOKENS);
      }
    });

    it("chat completions streamed: the deltas add up to the reply; the same image again is cached", async () => {
      const stream = await openai().chat.completions.create({
        model: MODEL,
        temperature: 0,
        max_tokens: 32,
        stream: true,
        stream_options: { include_usage: true },
        messages: [
          { role: "user", content: [{ type: "image_url", image_url: { url: dataUrl(blue), detail: "low" } }] },
        ],
      });
      let text = "";
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? "";
        usage = chunk.usage ?? usage;
      }
      expect(text).toBe(VISION_BLUE);
      const again = await chat(red);
      const cached = await chat(red);
      expect(cached.choices[0]?.message.content).toBe(VISION_RED);
      expect(cached.usage?.prompt_tokens_details?.cached_tokens).toBe((again.usage?.prompt_tokens ?? 0) - 1);
      expect(usage?.prompt_tokens).toBeGreaterThan(VISION_IMAGE_PROMPT_TOKENS);
    });

    it("Responses: input_image by data: URL and by file_id", async () => {
      const client = openai();
      const byUrl = await client.responses.create({
        model: MODEL,
        temperature: 0,
        max_output_tokens: 32,
        input: [
          {
            role: "user",
            content: [
              { type: "input_text", text: QUESTION },
              { type: "input_image", image_url: dataUrl(red), detail: "auto" },
            ],
          },
        ],
      });
      expect(byUrl.output_text).toBe(VISION_RED);
      const file = await client.files.create({ file: await toFile(blue, "blue.png"), purpose: "vision" });
      const byFile = await client.responses.create({
        model: MODEL,
        temperature: 0,
        max_output_tokens: 32,
        input: [{ role: "user", content: [{ type: "input_image", file_id: file.id, detail: "auto" }] }],
      });
      expect(byFile.output_text).toBe(VISION_BLUE);
    });

    it("Responses: a stored turn keeps its image (previous_response_id replays it); n=2 both read it", async () => {
      const client = openai();
      const first = await client.responses.create({
        model: MODEL,
        temperature: 0,
        max_output_tokens: 32,
        store: true,
        input: [{ role: "user", content: [{ type: "input_image", image_url: dataUrl(red), detail: "auto" }] }],
      });
      expect(first.output_text).toBe(VISION_RED);
      const next = await client.responses.create({
        model: MODEL,
        temperature: 0,
        max_output_tokens: 32,
        previous_response_id: first.id,
        input: [{ role: "user", content: [{ type: "input_text", text: QUESTION }] }],
      });
      expect(next.output_text).toBe(VISION_RED);
      expect(next.usage?.input_tokens).toBeGreaterThan(VISION_IMAGE_PROMPT_TOKENS);
      const two = await client.chat.completions.create({
        model: MODEL,
        temperature: 0,
        max_tokens: 32,
        n: 2,
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: dataUrl(blue) } }] }],
      });
      expect(two.choices.map((c) => c.message.content)).toEqual([VISION_BLUE, VISION_BLUE]);
    });

    it("Messages: an image block (base64), streamed and not; count_tokens counts the image", async () => {
      const content: Anthropic.ContentBlockParam[] = [
        { type: "image", source: { type: "base64", media_type: "image/png", data: green.toString("base64") } },
        { type: "text", text: QUESTION },
      ];
      const message = await anthropic().messages.create({
        model: MODEL,
        max_tokens: 32,
        messages: [{ role: "user", content }],
      });
      // The edge's text blocks carry no `citations` (docs/contract.md, "Anthropic Messages").
      expect(message.content).toEqual([{ type: "text", text: VISION_OTHER }]);
      const streamed = await anthropic()
        .messages.stream({ model: MODEL, max_tokens: 32, messages: [{ role: "user", content }] })
        .finalMessage();
      expect(streamed.content).toEqual(message.content);
      const counted = await anthropic().messages.countTokens({ model: MODEL, messages: [{ role: "user", content }] });
      // The whole prompt: Messages' usage splits it into uncached, read from the cache (the other runtime's run
      // sent the same prompt to this sidecar) and written to it.
      const { input_tokens, cache_read_input_tokens, cache_creation_input_tokens } = message.usage;
      expect(counted.input_tokens).toBe(
        input_tokens + (cache_read_input_tokens ?? 0) + (cache_creation_input_tokens ?? 0),
      );
      const plain = await anthropic().messages.countTokens({
        model: MODEL,
        messages: [{ role: "user", content: [{ type: "text", text: QUESTION }] }],
      });
      expect(counted.input_tokens - plain.input_tokens).toBe(VISION_IMAGE_PROMPT_TOKENS);
    });

    it("Ollama: a message's images", async () => {
      const ollama = new Ollama({ host: edge().url });
      const reply = await ollama.chat({
        model: MODEL,
        options: { temperature: 0, num_predict: 32 },
        messages: [{ role: "user", content: QUESTION, images: [blue.toString("base64")] }],
      });
      expect(reply.message.content).toBe(VISION_BLUE);
      const generated = await ollama.generate({
        model: MODEL,
        prompt: QUESTION,
        images: [red.toString("base64")],
        options: { temperature: 0, num_predict: 32 },
      });
      expect(generated.response).toBe(VISION_RED);
    });

    it("a broken image and an image to a text-only model are 400s naming the part", async () => {
      const broken = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
      const refused = (promise: Promise<unknown>) =>
        promise.then(
          () => undefined,
          (error: unknown) => [
            (error as InstanceType<typeof OpenAI.APIError>).status,
            (error as InstanceType<typeof OpenAI.APIError>).message,
          ],
        );
      const [status, message] = (await refused(chat(broken))) ?? [];
      expect(status).toBe(400);
      expect(message).toMatch(/messages\[0\]\.content\[1\]/);
      const [textStatus, textMessage] = (await refused(chat(red, "scripted"))) ?? [];
      expect(textStatus).toBe(400);
      expect(textMessage).toMatch(/reads text only.*messages\[0\]\.content\[1\]/);
    });
  },
);
