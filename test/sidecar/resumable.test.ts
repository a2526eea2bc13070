// Resumable generations on the real sidecar over native gRPC (scripted model): a caller that
// leaves does not stop one, Resume reads it again from any event, byte for byte, and it is
// cancelled when nobody reads it for its grace period. Unknown, expired and other clients'
// streams are NOT_FOUND.
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FinishReason,
  GenerateRequestSchema,
  GenerateResponseSchema,
  type GenerateResponse,
} from "../../proto/gen/inference/v1/inference_pb.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, readMetrics, replyText, startTestSidecar } from "../support/sidecar.js";

let sidecar: RunningSidecar;
beforeAll(async () => {
  // Without drafts, the song goes one token a step: its pace while nobody reads is what the grace test bounds.
  sidecar = await startTestSidecar({ sequences: 2, contextSize: 4096, heartbeatMs: 0, specLookup: 0 });
}, 60_000);
afterAll(() => sidecar?.stop());

const grpc = () => clientsFor(sidecar.url).grpc;
const STORY = { input: { case: "prompt" as const, value: "Once upon a time" } };
const SONG = { input: { case: "prompt" as const, value: "Let us sing. Sing" } };
const bytesOf = (events: readonly GenerateResponse[]) =>
  events.map((e) => Buffer.from(toBinary(GenerateResponseSchema, e)).toString("base64"));

/** Reads `events` until `stopAfter` of them arrived (then cancels the call), or to the end. */
async function read(
  events: (signal: AbortSignal) => AsyncIterable<GenerateResponse>,
  stopAfter = Infinity,
): Promise<GenerateResponse[]> {
  const call = new AbortController();
  const got: GenerateResponse[] = [];
  try {
    for await (const e of events(call.signal)) {
      got.push(e);
      if (got.length === stopAfter) {
        call.abort();
        break;
      }
    }
  } catch (error) {
    if (!(error instanceof ConnectError && error.code === Code.Canceled)) throw error;
  }
  return got;
}

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "ok",
    (error: unknown) => (error instanceof ConnectError ? Code[error.code] : String(error)),
  );

describe("resumable generations", () => {
  it(
    "name the stream in start, give the resume context back, and replay every event byte for byte, from any " + "event",
    async () => {
      const context = new TextEncoder().encode('{"protocol":"chat"}');
      const events = await read((signal) =>
        grpc().generate({ ...STORY, resumable: true, resumeContext: context, clientId: "k1" }, { signal }),
      );
      const start = events[0]?.event;
      expect(start?.case).toBe("start");
      const streamId = start?.case === "start" ? start.value.streamId : "";
      expect(streamId).toMatch(/^strm_[A-Za-z0-9_-]{22}$/);
      expect(start?.case === "start" ? new TextDecoder().decode(start.value.resumeContext) : "").toBe(
        '{"protocol":"chat"}',
      );
      expect(replyText(events.map((e) => e.event))).toBe(" there lived a tiny llama (🦙).");
      const again = await read((signal) => grpc().resume({ streamId, clientId: "k1" }, { signal }));
      expect(bytesOf(again)).toEqual(bytesOf(events));
      const tail = await read((signal) => grpc().resume({ streamId, clientId: "k1", after: 4 }, { signal }));
      expect(bytesOf(tail)).toEqual(bytesOf(events.slice(4)));
    },
  );

  it(
    "a caller that leaves does not stop it: a resume reads on to the finish, and the whole equals an uninterrupted " +
      "run",
    async () => {
      const request = { ...SONG, maxTokens: 40, resumable: true };
      const plain = await read((signal) => grpc().generate({ ...SONG, maxTokens: 40 }, { signal }));
      const first = await read((signal) => grpc().generate(request, { signal }), 6);
      const start = first[0]?.event;
      const streamId = start?.case === "start" ? start.value.streamId : "";
      const rest = await read((signal) => grpc().resume({ streamId, after: first.length }, { signal }));
      const whole = [...first, ...rest].map((e) => e.event);
      expect(replyText(whole)).toBe(replyText(plain.map((e) => e.event)));
      const finish = whole.at(-1);
      expect(finish?.case === "finish" ? [finish.value.reason, finish.value.completionTokens] : []).toEqual([
        FinishReason.LENGTH,
        40,
      ]);
    },
  );

  it("two readers at once read the same events", async () => {
    const first = await read((signal) => grpc().generate({ ...SONG, maxTokens: 30, resumable: true }, { signal }), 2);
    const start = first[0]?.event;
    const streamId = start?.case === "start" ? start.value.streamId : "";
    const [a, b] = await Promise.all([
      read((signal) => grpc().resume({ streamId }, { signal })),
      read((signal) => grpc().resume({ streamId }, { signal })),
    ]);
    expect(bytesOf(a)).toEqual(bytesOf(b));
    expect(a).toHaveLength(32); // start, 30 tokens, finish
  });

  it("is cancelled when nobody reads it for its grace period, and frees its sequence", async () => {
    const first = await read(
      (signal) => grpc().generate({ ...SONG, resumable: true, resumeGraceMs: 300 }, { signal }),
      3,
    );
    const start = first[0]?.event;
    const streamId = start?.case === "start" ? start.value.streamId : "";
    await expect
      .poll(async () => (await readMetrics(sidecar.url)).sidecar_generations_active, { timeout: 10_000 })
      .toBe(0);
    const all = await read((signal) => grpc().resume({ streamId }, { signal }));
    const finish = all.at(-1)?.event;
    expect(finish?.case === "finish" ? finish.value.reason : undefined).toBe(FinishReason.ABORT);
    // Left alone, the song runs to the end of the 4,096-token context.
    expect(all.length).toBeLessThan(2000);
  });

  it(
    "detached: goes on to its finish with nobody reading; a snapshot read returns what is kept so far and " + "ends",
    async () => {
      const first = await read(
        (signal) =>
          grpc().generate({ ...SONG, maxTokens: 400, resumable: true, detached: true, resumeGraceMs: 1 }, { signal }),
        2,
      );
      const start = first[0]?.event;
      const streamId = start?.case === "start" ? start.value.streamId : "";
      const early = await read((signal) => grpc().resume({ streamId, snapshot: true }, { signal }));
      expect(early.length).toBeGreaterThanOrEqual(2);
      expect(early.length).toBeLessThan(402);
      await expect
        .poll(async () => (await readMetrics(sidecar.url)).sidecar_generations_active, { timeout: 20_000 })
        .toBe(0);
      const all = await read((signal) => grpc().resume({ streamId, snapshot: true }, { signal }));
      const finish = all.at(-1)?.event;
      expect(finish?.case === "finish" ? [finish.value.reason, finish.value.completionTokens] : []).toEqual([
        FinishReason.LENGTH,
        400,
      ]);
      expect(bytesOf(all.slice(0, early.length))).toEqual(bytesOf(early));
    },
  );

  it("CancelStream stops it for every reader; afterwards it says the stream had finished", async () => {
    const first = await read((signal) => grpc().generate({ ...SONG, resumable: true, clientId: "k2" }, { signal }), 2);
    const start = first[0]?.event;
    const streamId = start?.case === "start" ? start.value.streamId : "";
    const reading = read((signal) => grpc().resume({ streamId, clientId: "k2" }, { signal }));
    expect(await grpc().cancelStream({ streamId, clientId: "k2" })).toMatchObject({ cancelled: true });
    const finish = (await reading).at(-1)?.event;
    expect(finish?.case === "finish" ? finish.value.reason : undefined).toBe(FinishReason.ABORT);
    expect(await grpc().cancelStream({ streamId, clientId: "k2" })).toMatchObject({ cancelled: false });
  });

  it("unknown streams and other clients' streams are NOT_FOUND, on Resume and CancelStream", async () => {
    const first = await read((signal) => grpc().generate({ ...STORY, resumable: true, clientId: "owner" }, { signal }));
    const start = first[0]?.event;
    const streamId = start?.case === "start" ? start.value.streamId : "";
    expect(await codeOf(read((signal) => grpc().resume({ streamId: "strm_nope" }, { signal })))).toBe("NotFound");
    expect(await codeOf(read((signal) => grpc().resume({ streamId, clientId: "someone-else" }, { signal })))).toBe(
      "NotFound",
    );
    expect(await codeOf(grpc().cancelStream({ streamId, clientId: "someone-else" }))).toBe("NotFound");
  });

  it("a request that is not resumable gets no stream id", async () => {
    const events = await read((signal) => grpc().generate(create(GenerateRequestSchema, STORY), { signal }));
    const start = events[0]?.event;
    expect(start?.case === "start" ? [start.value.streamId, start.value.resumeContext.length] : []).toEqual(["", 0]);
  });
});
