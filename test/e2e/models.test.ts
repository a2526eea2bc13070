// Several models on one real sidecar behind the real edge, on Node and under workerd (`wrangler
// dev`): a catalogue of three generated models (demo, tools, random-60m), none loaded at start. Each
// answers by its name on every protocol through the official `openai` and `@anthropic-ai/sdk`
// clients, with exactly what the sidecar answers that model over gRPC; `/v1/models` shows each
// model's status as requests load it; an unknown name is each protocol's 404; a request's
// `keep_alive: 0` unloads its model once it is done; `POST /models/load` loads one; a loaded model
// shows what its template writes (its tool-call syntax, reasoning).
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { answer, startCatalogue } from "../support/catalogue.js";
import { clientsFor, collect } from "../support/sidecar.js";
import { describeOnRuntimes } from "../support/runtimes.js";

const MODELS = ["demo", "tools", "random-60m"] as const;
const MESSAGE = "Hello!";
const PROMPT = "Once upon a time";
const MAX_TOKENS = 8;

let sidecar: RunningSidecar;
/** What each model answers over gRPC, at temperature 0: to a chat of MESSAGE, and to PROMPT. */
const expected = new Map<string, { chat: string; prompt: string }>();

beforeAll(async () => {
  sidecar = await startCatalogue([...MODELS], { sequences: 2, contextSize: 512 });
  const grpc = clientsFor(sidecar.url).grpc;
  for (const model of MODELS) {
    const sampling = { temperature: 0 };
    const chat = { case: "chat", value: { messages: [{ role: Role.USER, content: MESSAGE }] } };
    const chatText = answer(
      await collect(grpc.generate({ model, input: chat, maxTokens: MAX_TOKENS, sampling } as never)),
    ).text;
    const promptText = answer(
      await collect(
        grpc.generate({ model, input: { case: "prompt", value: PROMPT }, maxTokens: MAX_TOKENS, sampling }),
      ),
    ).text;
    expected.set(model, { chat: chatText, prompt: promptText });
    // Unloaded again, so that each runtime's suite starts from a catalogue with nothing loaded.
    await grpc.unloadModel({ model });
  }
  // The three models do not all answer alike: a test that reached the wrong model would fail.
  expect(new Set(MODELS.map((m) => expected.get(m)?.prompt)).size).toBeGreaterThan(1);
}, 180_000);
afterAll(() => sidecar?.stop());

type ModelObject = OpenAI.Models.Model & { status: { value: string } };

describeOnRuntimes(
  "three models on one sidecar",
  () => [sidecar.url],
  (edge) => {
    const openai = () => new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: "none", maxRetries: 0 });
    const anthropic = () => new Anthropic({ baseURL: edge().url, apiKey: "none", maxRetries: 0 });
    const statusOf = async (id: string): Promise<string> =>
      ((await openai().models.retrieve(id)) as ModelObject).status.value;
    // The next runtime's suite starts from a catalogue with nothing loaded again.
    afterAll(async () => {
      for (const model of MODELS) await clientsFor(sidecar.url).grpc.unloadModel({ model });
    });

    it("lists every catalogued model, none loaded yet", async () => {
      const models = (await openai().models.list()).data as ModelObject[];
      expect(models.map((m) => [m.id, m.status.value])).toEqual(MODELS.map((m) => [m, "available"]));
    });

    it.each(MODELS)("%s answers by its name on every protocol, as the sidecar answers it", async (model) => {
      const want = expected.get(model);
      const settings = { model, max_tokens: MAX_TOKENS, temperature: 0 };
      const chat = await openai().chat.completions.create({
        ...settings,
        messages: [{ role: "user", content: MESSAGE }],
      });
      expect([chat.model, chat.choices[0]?.message.content]).toEqual([model, want?.chat]);
      expect(await statusOf(model)).toBe("loaded");
      const completion = await openai().completions.create({ ...settings, prompt: PROMPT });
      expect([completion.model, completion.choices[0]?.text]).toEqual([model, want?.prompt]);
      const response = await openai().responses.create({
        model,
        input: MESSAGE,
        max_output_tokens: MAX_TOKENS,
        temperature: 0,
        store: false,
      });
      expect([response.model, response.output_text]).toEqual([model, want?.chat]);
      const message = await anthropic().messages.create({
        ...settings,
        messages: [{ role: "user", content: MESSAGE }],
      });
      const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
      expect([message.model, text]).toEqual([model, want?.chat]);
    });

    it("shows what each loaded model's template writes: its call syntax and reasoning", async () => {
      type Described = ModelObject & { capabilities?: string[]; tool_call_syntax?: string };
      const tools = (await openai().models.retrieve("tools")) as Described;
      expect([tools.capabilities, tools.tool_call_syntax]).toEqual([["completion", "tools", "thinking"], "hermes"]);
      // ChatML writes no calls: node-llama-cpp's own syntax, which its wrapper describes in the prompt.
      const demo = (await openai().models.retrieve("demo")) as Described;
      expect([demo.capabilities, demo.tool_call_syntax]).toEqual([["completion", "tools"], "generic"]);
    });

    it("answers an unknown model with each protocol's 404", async () => {
      const chat = openai().chat.completions.create({
        model: "nowhere",
        messages: [{ role: "user", content: MESSAGE }],
      });
      await expect(chat).rejects.toMatchObject({ status: 404, code: "model_not_found" });
      const message = anthropic().messages.create({
        model: "nowhere",
        max_tokens: 4,
        messages: [{ role: "user", content: MESSAGE }],
      });
      await expect(message).rejects.toMatchObject({
        status: 404,
        error: { type: "error", error: { type: "not_found_error" } },
      });
    });

    it(
      "unloads a model a request asked to keep for 0 seconds, and loads it again on POST /models/load (kept 5 " +
        "minutes)",
      async () => {
        const body = {
          model: "random-60m",
          max_tokens: 2,
          messages: [{ role: "user", content: MESSAGE }],
          keep_alive: 0,
        };
        await openai()
          .chat.completions.create(body as never)
          .catch((e) => {
            console.error("CHAT", JSON.stringify(e.error));
            throw e;
          });
        let status = await statusOf("random-60m").catch((e) => {
          console.error("RETRIEVE", JSON.stringify(e.error));
          throw e;
        });
        for (let i = 0; i < 100 && status !== "available"; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          status = await statusOf("random-60m");
        }
        expect(status).toBe("available");
        const loaded = await fetch(`${edge().url}/models/load`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"model":"random-60m","keep_alive":"5m"}',
        });
        expect(loaded.status).toBe(200);
        expect(((await loaded.json()) as ModelObject).status).toEqual({ value: "loaded" });
        expect(await statusOf("random-60m")).toBe("loaded");
      },
    );
  },
);
