// LoRA adapters end to end (docs/contract.md, "LoRA adapters"): a real sidecar serving the `adapted` model with two
// adapters (`--lora`), a real edge on Node and under workerd with keys on, the official clients naming an adapter by
// model on every protocol (OpenAI, Anthropic, Ollama) and exact replies; llama-server's `lora` field on chat;
// /v1/models listing the adapters; GET /lora-adapters and the admin's POST.
import Anthropic from "@anthropic-ai/sdk";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADAPTED_REPLIES, ensureModels } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startCatalogue } from "../support/catalogue.js";
import { describeOnRuntimes, type RuntimeEdge, startEdgeOn } from "../support/runtimes.js";

const CLIENT_KEY = "lora-client-key";
const ADMIN_KEY = "lora-admin-key";
const HELLO = [{ role: "user" as const, content: "Hello!" }];
let sidecar: RunningSidecar;
let paths: Record<"adapted" | "pirate-lora" | "french-lora", string>;

beforeAll(async () => {
  paths = await ensureModels("models", ["adapted", "pirate-lora", "french-lora"]);
  const lora = [
    { name: "pirate-lora", path: paths["pirate-lora"], scale: 1 },
    { name: "french-lora", path: paths["french-lora"], scale: 1 },
  ];
  sidecar = await startCatalogue([paths.adapted], { sequences: 2 }, { lora });
}, 120_000);
afterAll(() => sidecar?.stop());

describeOnRuntimes(
  "LoRA adapters",
  () => [sidecar.url],
  (edge) => {
    const openai = () => new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
    const chat = async (body: object) => {
      const reply = await openai().chat.completions.create({ messages: HELLO, max_tokens: 24, ...body } as never);
      return [reply.model, reply.choices[0]?.message.content];
    };
    const admin = (body: unknown, key = ADMIN_KEY) =>
      fetch(`${edge().url}/lora-adapters`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });

    it("answers an adapter named by model, the base by its name, on the OpenAI client", async () => {
      for (const model of ["pirate-lora", "adapted", "french-lora"] as const)
        expect(await chat({ model })).toEqual([model, ADAPTED_REPLIES[model]]);
    });

    it("answers an adapter named by model on the Anthropic and Ollama clients", async () => {
      const anthropic = new Anthropic({ baseURL: edge().url, apiKey: CLIENT_KEY, maxRetries: 0 });
      const message = await anthropic.messages.create({ model: "french-lora", max_tokens: 24, messages: HELLO });
      expect([message.model, message.content]).toEqual([
        "french-lora",
        [{ type: "text", text: ADAPTED_REPLIES["french-lora"] }],
      ]);
      const ollama = new Ollama({ host: edge().url, headers: { Authorization: `Bearer ${CLIENT_KEY}` } });
      const answer = await ollama.chat({ model: "pirate-lora", messages: HELLO, options: { num_predict: 24 } });
      expect([answer.model, answer.message.content]).toEqual(["pirate-lora", ADAPTED_REPLIES["pirate-lora"]]);
    });

    it("takes llama-server's lora field on chat: by place or name; all at 0: the base; a 400 names it", async () => {
      expect(await chat({ model: "adapted", lora: [{ id: 1, scale: 1 }] })).toEqual([
        "french-lora",
        ADAPTED_REPLIES["french-lora"],
      ]);
      expect(await chat({ lora: [{ id: "pirate-lora", scale: 1 }] })).toEqual([
        "pirate-lora",
        ADAPTED_REPLIES["pirate-lora"],
      ]);
      expect(await chat({ model: "pirate-lora", lora: [{ id: 0, scale: 0 }] })).toEqual([
        "adapted",
        ADAPTED_REPLIES.adapted,
      ]);
      const refused = await chat({ lora: [{ id: 0, scale: 0.5 }] }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ status: 400, param: "lora[0].scale" });
      const unknown = await chat({ lora: [{ id: 7, scale: 1 }] }).catch((e: unknown) => e);
      expect(unknown).toMatchObject({ status: 400, param: "lora[0].id", code: "lora_not_found" });
    });

    it("lists the adapters in /v1/models (kind lora, parent) and in GET /lora-adapters", async () => {
      const models = await openai().models.list();
      expect(models.data.map((m) => [m.id, (m as { kind?: string }).kind, (m as { parent?: string }).parent])).toEqual([
        ["adapted", "generate", undefined],
        ["pirate-lora", "lora", "adapted"],
        ["french-lora", "lora", "adapted"],
      ]);
      const listed = await fetch(`${edge().url}/lora-adapters`, { headers: { authorization: `Bearer ${CLIENT_KEY}` } });
      expect(await listed.json()).toEqual([
        { id: 0, name: "pirate-lora", path: paths["pirate-lora"], scale: 1, parent: "adapted" },
        { id: 1, name: "french-lora", path: paths["french-lora"], scale: 1, parent: "adapted" },
      ]);
    });

    it("sets default scales by POST /lora-adapters with an admin key only", async () => {
      const denied = await admin([{ id: 0, scale: 0 }], CLIENT_KEY);
      expect(denied.status).toBe(403);
      const set = await admin([{ id: 0, scale: 0 }]);
      expect([set.status, await set.json()]).toEqual([200, { success: true }]);
      const listed = await fetch(`${edge().url}/lora-adapters`, { headers: { authorization: `Bearer ${CLIENT_KEY}` } });
      expect(((await listed.json()) as { scale: number }[]).map((a) => a.scale)).toEqual([0, 1]);
      expect(await chat({ model: "pirate-lora" })).toEqual(["pirate-lora", ADAPTED_REPLIES.adapted]);
      await admin([{ id: "pirate-lora", scale: 1 }]);
      expect(await chat({ model: "pirate-lora" })).toEqual(["pirate-lora", ADAPTED_REPLIES["pirate-lora"]]);
    });
  },
  { apiKeys: CLIENT_KEY, adminKeys: ADMIN_KEY },
);

describe("LoRA adapters behind an edge with two sidecars, one of them without adapters (node)", () => {
  let plain: RunningSidecar;
  let edge: RuntimeEdge;
  beforeAll(async () => {
    // The same base alone: it would answer any name with the base's reply.
    plain = await startCatalogue([paths.adapted], { sequences: 2 });
    edge = await startEdgeOn("node", [plain.url, sidecar.url]);
  }, 120_000);
  afterAll(async () => {
    await edge?.stop();
    await plain?.stop();
  });

  it("routes every adapter's request to the sidecar that has it; the base's and unknown names to either", async () => {
    const openai = new OpenAI({ baseURL: `${edge.url}/v1`, apiKey: "x", maxRetries: 0 });
    const ask = async (model: string) =>
      (await openai.chat.completions.create({ model, messages: HELLO, max_tokens: 24 })).choices[0]?.message.content;
    const names = ["pirate-lora", "french-lora", "pirate-lora", "french-lora", "adapted", "gpt-4o"];
    const replies = await Promise.all(names.map(ask));
    expect(replies).toEqual([
      ADAPTED_REPLIES["pirate-lora"],
      ADAPTED_REPLIES["french-lora"],
      ADAPTED_REPLIES["pirate-lora"],
      ADAPTED_REPLIES["french-lora"],
      ADAPTED_REPLIES.adapted,
      ADAPTED_REPLIES.adapted,
    ]);
  });
});
