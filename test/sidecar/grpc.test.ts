import { Code, ConnectError } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { service as healthService } from "grpc-health-check";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { ChatSchema, FinishReason, Role, type GenerateRequest } from "../../proto/gen/inference/v1/inference_pb.js";
import { decodeQueue } from "../../sidecar/engine/llama/llama-internals.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { CHAT_REPLY } from "../support/scripted.js";
import { clientsFor, collect, readMetrics, replyText, startTestSidecar, transportsOf } from "../support/sidecar.js";

// The scripted test model (gguf/models.ts) answers with fixed token chains.
const STORY = [" there", " lived", " a", " tiny", " llama", " (", "", "", "", "🦙", ")."];

type Input = GenerateRequest["input"];
const prompt = (value: string): Input => ({ case: "prompt", value });
const chat = (content: string): Input => ({
  case: "chat",
  value: create(ChatSchema, { messages: [{ role: Role.USER, content }] }),
});

let sidecar: RunningSidecar;
beforeAll(async () => {
  sidecar = await startTestSidecar();
});
afterAll(async () => {
  await sidecar.stop();
});

describe.each(["grpc", "grpc-web", "in-process"] as const)("Generate over %s", (transport) => {
  const client = () => transportsOf(sidecar)[transport];

  it("streams start, one event per token with whole characters, then finish", async () => {
    const events = await collect(
      client().generate({ input: prompt("Once upon a time"), sampling: { temperature: 0 } }),
    );
    const [start, ...rest] = events;
    expect(start?.case).toBe("start");
    expect(start?.value).toMatchObject({ model: "scripted", promptTokens: 5 });
    const tokens = rest.filter((e) => e.case === "token");
    expect(tokens.map((e) => e.value.text)).toEqual(STORY);
    // The llama is four byte tokens: each carries its own byte, only the last carries the character.
    expect(tokens.slice(6, 10).map((e) => [...e.value.piece])).toEqual([[0xf0], [0x9f], [0xa6], [0x99]]);
    const finish = rest.at(-1);
    expect(finish?.case).toBe("finish");
    expect(finish?.value).toMatchObject({ reason: FinishReason.STOP, promptTokens: 5, completionTokens: 11, text: "" });
    expect(rest.slice(0, -1).every((e) => e.case === "token")).toBe(true);
  });

  it("renders chat with the model's own template, at temperature 1 with a seed too", async () => {
    for (const sampling of [{ temperature: 0 }, { temperature: 1, seed: 7, topP: 0.9, presencePenalty: 0.5 }]) {
      const events = await collect(client().generate({ input: chat("Weather in Tokyo?"), sampling }));
      expect(replyText(events)).toBe(CHAT_REPLY);
      for (const e of events) if (e.case === "token") expect(e.value.text).not.toContain("\uFFFD");
    }
  });

  it("ends by length at max_tokens", async () => {
    const events = await collect(client().generate({ input: prompt("Let us sing. Sing"), maxTokens: 7 }));
    expect(replyText(events)).toBe(" la".repeat(7));
    expect(events.at(-1)?.value).toMatchObject({ reason: FinishReason.LENGTH, completionTokens: 7 });
  });

  it("ends with CONTEXT_FULL, not a crash, when the reply fills the context", async () => {
    const events = await collect(client().generate({ input: prompt("Let us sing. Sing") }));
    const start = events[0]?.value as { promptTokens: number };
    expect(events.at(-1)?.value).toMatchObject({
      reason: FinishReason.CONTEXT_FULL,
      completionTokens: 256 - start.promptTokens,
    });
  });

  it("never sends any part of a stop sequence, across token boundaries", async () => {
    const cases = [
      { stop: ["tiny llama"], text: " there lived a ", matched: "tiny llama" },
      { stop: ["y l"], text: " there lived a tin", matched: "y l" },
      { stop: ["🦙"], text: " there lived a tiny llama (", matched: "🦙" },
    ];
    for (const c of cases) {
      const events = await collect(client().generate({ input: prompt("Once upon a time"), stop: c.stop }));
      expect(replyText(events)).toBe(c.text);
      expect(events.at(-1)?.value).toMatchObject({ reason: FinishReason.STOP, stopSequence: c.matched });
    }
  });

  it("sends text held for a stop that never came with the finish event", async () => {
    const events = await collect(client().generate({ input: prompt("Once upon a time"), stop: [").!"] }));
    const tokens = events.filter((e) => e.case === "token").map((e) => e.value.text);
    expect(tokens.join("")).toBe(" there lived a tiny llama (🦙");
    expect(events.at(-1)?.value).toMatchObject({ reason: FinishReason.STOP, text: ").", stopSequence: "" });
  });

  it("reports log-probabilities and the top alternatives when asked", async () => {
    const events = await collect(
      client().generate({
        input: prompt("Once upon a time"),
        sampling: { temperature: 0 },
        logprobs: true,
        topLogprobs: 3,
      }),
    );
    const tokens = events.flatMap((e) => (e.case === "token" ? [e.value] : []));
    expect(tokens).toHaveLength(11);
    for (const t of tokens) {
      expect(t.logprob).toBeLessThanOrEqual(0);
      expect(t.logprob).toBeGreaterThan(-0.001);
      expect(t.topLogprobs).toHaveLength(3);
      expect(t.topLogprobs[0]?.id).toBe(t.id);
      expect(t.topLogprobs[1]?.logprob).toBeLessThan(-20);
    }
  });

  it.each([
    ["a prompt larger than the context", { input: prompt("word ".repeat(400)) }, /context holds 256 tokens/],
    ["temperature out of range", { input: prompt("x"), sampling: { temperature: 5 } }, /temperature/],
    ["top_logprobs above 20", { input: prompt("x"), topLogprobs: 21 }, /top_logprobs/],
    ["too many stop sequences", { input: prompt("x"), stop: Array.from({ length: 17 }, (_, i) => `s${i}`) }, /stop/],
    ["an empty stop sequence", { input: prompt("x"), stop: [""] }, /stop/],
    [
      "a logit bias outside the vocabulary",
      { input: prompt("x"), sampling: { logitBias: { 99999: 1 } } },
      /vocabulary/,
    ],
    [
      "a chat without messages",
      { input: { case: "chat" as const, value: create(ChatSchema) } },
      /at least one message/,
    ],
    ["no input at all", {}, /neither a prompt, chat messages nor an infill/],
  ])("refuses %s with INVALID_ARGUMENT before any event", async (_name, request, message) => {
    const received: unknown[] = [];
    const error = await (async () => {
      for await (const e of client().generate(request)) received.push(e);
    })().catch((e: unknown) => e);
    expect(received).toEqual([]);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
    expect((error as ConnectError).rawMessage).toMatch(message);
  });

  it("tokenizes, detokenizes and lists the model", async () => {
    const { tokens } = await client().tokenize({ input: { case: "text", value: "Once upon a time" } });
    expect(tokens).toHaveLength(5); // BOS and four word pieces
    expect((await client().detokenize({ tokens: tokens.slice(1) })).text).toBe("Once upon a time");
    const { models } = await client().listModels({});
    expect(models).toHaveLength(1);
    expect(models[0]).toMatchObject({
      id: "scripted",
      contextSize: 256,
      sequences: 2,
      chatTemplate: "ChatML",
      architecture: "llama",
    });
  });
});

describe("concurrent requests", () => {
  it("go to llama.cpp as one batch per step, ordered by sequence, with turns for cache trims", () => {
    // If a node-llama-cpp upgrade changes the internals this relies on, the model does not load
    // (sidecar/engine/llama/llama-internals.ts; test/sidecar/llama-internals.test.ts).
    const model = sidecar.models[0];
    expect(model && decodeQueue(model.context).decodeTokens.name).toBe("scheduledDecode");
  });

  it("each get their own exact text while more requests than sequences wait their turn", async () => {
    const { grpc: client } = clientsFor(sidecar.url);
    const jobs = [
      { input: prompt("Once upon a time"), text: STORY.join("") },
      { input: chat("Hi"), text: CHAT_REPLY },
      { input: prompt("Let us sing. Sing"), text: " la".repeat(40), maxTokens: 40 },
      { input: chat("And tomorrow?"), text: CHAT_REPLY },
      { input: prompt("Once upon a time"), text: STORY.join("") },
    ];
    const results = await Promise.all(
      jobs.map((j) => collect(client.generate({ input: j.input, ...(j.maxTokens ? { maxTokens: j.maxTokens } : {}) }))),
    );
    expect(results.map(replyText)).toEqual(jobs.map((j) => j.text));
  });
});

describe("cancellation", () => {
  it.each(["grpc", "grpc-web", "in-process"] as const)(
    "a %s caller that leaves stops its generation",
    async (transport) => {
      const long = await startTestSidecar({ sequences: 1, contextSize: 4096 });
      try {
        const client = transportsOf(long)[transport];
        const controller = new AbortController();
        let seen = 0;
        await (async () => {
          for await (const e of client.generate(
            { input: prompt("Let us sing. Sing") },
            { signal: controller.signal },
          )) {
            if (e.event.case === "token" && ++seen === 5) controller.abort();
          }
        })().catch(() => undefined);
        await expect
          .poll(async () => (await readMetrics(long.url)).sidecar_generations_active, { timeout: 5000 })
          .toBe(0);
        const after = await readMetrics(long.url);
        expect(after.sidecar_generations_aborted_total).toBe(1);
        // It would have generated 4,000 more tokens had it gone on.
        expect(after.sidecar_tokens_generated_total).toBeLessThan(1000);
        await new Promise((r) => setTimeout(r, 100));
        expect((await readMetrics(long.url)).sidecar_tokens_generated_total).toBe(after.sidecar_tokens_generated_total);
      } finally {
        await long.stop();
      }
    },
  );
});

describe("direct gRPC callers need no copy of the .proto", () => {
  const require = createRequire(import.meta.url);

  it("answers grpc.health.v1", async () => {
    const Health = grpc.makeGenericClientConstructor(healthService, "Health");
    const health = new Health(`127.0.0.1:${sidecar.port}`, grpc.credentials.createInsecure()) as unknown as {
      check(req: { service: string }, cb: (e: Error | null, r: { status: string }) => void): void;
      close(): void;
    };
    const status = await new Promise<string>((resolve, reject) =>
      health.check({ service: "inference.v1.InferenceService" }, (e, r) => (e ? reject(e) : resolve(r.status))),
    );
    health.close();
    expect(status).toBe("SERVING");
  });

  it("serves reflection with the service's file descriptor", async () => {
    const protoFile = require.resolve("@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto");
    const loaded = grpc.loadPackageDefinition(protoLoader.loadSync(protoFile, { keepCase: true })) as never as {
      grpc: { reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } } };
    };
    const client = new loaded.grpc.reflection.v1.ServerReflection(
      `127.0.0.1:${sidecar.port}`,
      grpc.credentials.createInsecure(),
    );
    const ask = (request: object) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const call = (
          client as unknown as { ServerReflectionInfo(): grpc.ClientDuplexStream<object, Record<string, unknown>> }
        ).ServerReflectionInfo();
        call.on("data", (d) => {
          resolve(d);
          call.end();
        });
        call.on("error", reject);
        call.write(request);
      });
    const list = (await ask({ list_services: "" })) as { list_services_response: { service: { name: string }[] } };
    // Every service of the port, as grpcurl users expect: inference, health and reflection itself.
    expect(list.list_services_response.service.map((s) => s.name).sort()).toEqual([
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "inference.v1.InferenceService",
    ]);
    const file = (await ask({ file_containing_symbol: "inference.v1.InferenceService" })) as {
      file_descriptor_response: { file_descriptor_proto: Buffer[] };
    };
    const [descriptor] = file.file_descriptor_response.file_descriptor_proto;
    expect(descriptor?.toString("latin1")).toContain("inference/v1/inference.proto");
    client.close();
  });
});
