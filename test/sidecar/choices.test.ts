// Several choices of one prompt (GenerateRequest.n; sidecar/engine/decode/several-choices.ts) over real
// gRPC: the choices equal the one-choice replies (temperature 0, and seed + i at temperature 1),
// the prompt is evaluated once and copied, the choices' steps share batches, and a caller that
// leaves stops them all.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  FinishReason,
  type GenerateRequest,
  type GenerateResponse,
} from "../../proto/gen/inference/v1/inference_pb.js";
import { ensureModels } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { watchBatches } from "../support/engine.js";
import { STORY } from "../support/scripted.js";
import { clientsFor, collect, startTestSidecar, type InferenceClient } from "../support/sidecar.js";

type Event = GenerateResponse["event"];
type Request = Partial<Omit<GenerateRequest, "$typeName" | "input" | "sampling">> & {
  prompt: string;
  sampling?: { temperature?: number; seed?: number; topK?: number };
};

const SEQUENCES = 4;

/** Each choice's token ids and text (its finish's held-back text included), and its finish. */
function byChoice(
  events: readonly Event[],
  n: number,
): { ids: number[]; text: string; finish: Extract<Event, { case: "finish" }>["value"] | undefined }[] {
  const choices = Array.from({ length: n }, () => ({
    ids: [] as number[],
    text: "",
    finish: undefined as Extract<Event, { case: "finish" }>["value"] | undefined,
  }));
  for (const event of events) {
    if (event.case === "token") {
      const choice = choices[event.value.choice];
      choice?.ids.push(event.value.id);
      if (choice !== undefined) choice.text += event.value.text;
    }
    if (event.case === "finish") {
      const choice = choices[event.value.choice];
      if (choice === undefined) continue;
      choice.text += event.value.text;
      choice.finish = event.value;
    }
  }
  return choices;
}

const generate = (client: InferenceClient, { prompt, ...rest }: Request) =>
  collect(client.generate({ input: { case: "prompt", value: prompt }, ...rest }));

describe("n choices of the scripted model", () => {
  let sidecar: RunningSidecar;
  let client: InferenceClient;
  beforeAll(async () => {
    // Without drafts, so every step is one token a choice (drafted steps: speculation.test.ts).
    sidecar = await startTestSidecar({ sequences: SEQUENCES, specLookup: 0 });
    client = clientsFor(sidecar.url).grpc;
  });
  afterAll(() => sidecar?.stop());

  it(
    "gives n identical choices at temperature 0, each the one-choice reply, in one stream: one start, a finish per " +
      "choice",
    async () => {
      const one = byChoice(await generate(client, { prompt: "Once upon a time", sampling: { temperature: 0 } }), 1)[0];
      expect(one?.text).toBe(STORY);
      const events = await generate(client, { prompt: "Once upon a time", sampling: { temperature: 0 }, n: 3 });
      expect(events[0]?.case).toBe("start");
      expect(events.filter((e) => e.case === "start")).toHaveLength(1);
      expect(events.filter((e) => e.case === "finish").map((e) => e.value.choice as number)).toHaveLength(3);
      expect(events.at(-1)?.case).toBe("finish");
      const choices = byChoice(events, 3);
      for (const choice of choices) {
        expect(choice.text).toBe(STORY);
        expect(choice.ids).toEqual(one?.ids);
        expect(choice.finish).toMatchObject({ reason: FinishReason.STOP, promptTokens: 5, completionTokens: 11 });
      }
    },
  );

  it("evaluates the prompt once, copies it, then decodes every choice's steps in one batch", async () => {
    const prompt = "Far away, there lived a tiny llama. Once upon a time";
    const { tokens } = await client.tokenize({ input: { case: "text", value: prompt } });
    const batches: number[][] = [];
    watchBatches(sidecar.models[0] as never, (items) => batches.push(items));
    // A prompt no sequence holds: all of it is evaluated.
    const events = await generate(client, { prompt, sampling: { temperature: 0 }, n: 3, maxTokens: 6 });
    const start = events.find((e) => e.case === "start")?.value;
    // At most the beginning-of-sequence token is in a sequence already.
    const cached = start?.cachedTokens ?? 0;
    expect(start).toMatchObject({ promptTokens: tokens.length });
    expect(cached).toBeLessThanOrEqual(1);
    for (const choice of byChoice(events, 3))
      expect(choice.finish).toMatchObject({ reason: FinishReason.LENGTH, completionTokens: 6, cachedTokens: cached });
    // The prompt but its last token, once, on one sequence; then the last token on each of the three
    // sequences in one batch, and every step after it a batch of the three.
    expect(batches).toEqual([[tokens.length - 1 - cached], [1, 1, 1], ...Array.from({ length: 5 }, () => [1, 1, 1])]);
  });

  it("refuses more choices than the model has sequences, and a resumable request for several", async () => {
    const refusal = (request: Request) =>
      generate(client, request).then(
        () => undefined,
        (error: unknown) => ConnectError.from(error),
      );
    const tooMany = await refusal({ prompt: "Once upon a time", n: SEQUENCES + 1 });
    expect(tooMany?.code).toBe(Code.InvalidArgument);
    expect(tooMany?.rawMessage).toBe(
      `n is ${SEQUENCES + 1}, but model "scripted" generates at most ${SEQUENCES} replies at once (its sequences)`,
    );
    expect((await refusal({ prompt: "Once upon a time", n: 2, resumable: true }))?.code).toBe(Code.InvalidArgument);
  });
});

describe("n choices of a random-weight model", () => {
  let sidecar: RunningSidecar;
  let client: InferenceClient;
  beforeAll(async () => {
    const { "random-tiny": model } = await ensureModels("models", ["random-tiny"]);
    sidecar = await startTestSidecar({ model, sequences: 3, contextSize: 512 });
    client = clientsFor(sidecar.url).grpc;
  });
  afterAll(() => sidecar?.stop());

  it("samples choice i with seed + i: each choice is the one-choice reply with that seed", async () => {
    const sampling = { temperature: 1, topK: 0, seed: 41 };
    const events = await generate(client, { prompt: "Once upon a time", sampling, n: 3, maxTokens: 12 });
    const choices = byChoice(events, 3);
    const seeds = [41, 42, 43];
    for (const [i, seed] of seeds.entries()) {
      const [one] = byChoice(
        await generate(client, { prompt: "Once upon a time", sampling: { ...sampling, seed }, maxTokens: 12 }),
        1,
      );
      expect(choices[i]?.ids).toEqual(one?.ids);
      expect(choices[i]?.text).toBe(one?.text);
    }
    // The seeds made a difference: the choices are not all the same.
    expect(new Set(choices.map((c) => c.ids.join(","))).size).toBeGreaterThan(1);
  });

  it("repeats with seed 4294967295 (llama.cpp's 'random' value, OpenAI's -1), as seed 4294967294 does", async () => {
    const sampling = { temperature: 1, topK: 0 };
    const run = async (seed: number) =>
      byChoice(
        await generate(client, { prompt: "Once upon a time", sampling: { ...sampling, seed }, maxTokens: 12 }),
        1,
      )[0]?.ids;
    const [first, second, below] = [await run(0xffffffff), await run(0xffffffff), await run(0xfffffffe)];
    expect(second).toEqual(first);
    expect(below).toEqual(first);
  });

  it("stops every choice when the caller leaves, and frees their sequences", async () => {
    const [aborted, generated] = [sidecar.metrics.generationsAborted, sidecar.metrics.tokensGenerated];
    const controller = new AbortController();
    const seen = new Set<number>();
    const events = client.generate(
      { input: { case: "prompt", value: "Once upon a time" }, n: 3, maxTokens: 400 },
      { signal: controller.signal },
    );
    await expect(
      (async () => {
        for await (const { event } of events) {
          if (event.case === "token") seen.add(event.value.choice);
          if (seen.size === 3) controller.abort();
        }
      })(),
    ).rejects.toThrow();
    const loaded = sidecar.models[0];
    await vi.waitFor(() => expect(sidecar.metrics.generationsActive).toBe(0), { timeout: 10_000 });
    expect(loaded?.pool.busy).toBe(0);
    // Counted once for the request; far fewer tokens than 3 × 400.
    expect(sidecar.metrics.generationsAborted).toBe(aborted + 1);
    expect(sidecar.metrics.tokensGenerated - generated).toBeLessThan(3 * 400);
  });
});
