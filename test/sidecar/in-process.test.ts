// The in-process transport (sidecar/transport/in-process.ts) keeps a port's semantics: the caller's and the handler's
// objects apart, the handler's signal aborted when the caller leaves, its deadline passes or the sidecar shuts down,
// errors as ConnectErrors with their details; and against the real sidecar, the same answers as gRPC-Web.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type GenerateRequest,
  GenerateRequestSchema,
  InferenceService,
  PromptTooLongSchema,
} from "../../proto/gen/inference/v1/inference_pb.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { inProcessTransport } from "../../sidecar/transport/in-process.js";
import { startTestSidecar, transportsOf } from "../support/sidecar.js";

/** A service whose Generate records its request and context, then sends `count` tokens, one each 5 ms. */
function fakeService(count: number) {
  const seen: { request?: GenerateRequest; context?: HandlerContext; sent: number } = { sent: 0 };
  const impl: Partial<ServiceImpl<typeof InferenceService>> = {
    async *generate(request, context) {
      seen.request = request;
      seen.context = context;
      request.maxTokens = 999; // a handler that changes its request changes only its own copy
      for (let i = 0; i < count && !context.signal.aborted; i++) {
        await new Promise((r) => setTimeout(r, 5));
        seen.sent++;
        yield { event: { case: "token", value: { text: `t${i}` } } };
      }
    },
    tokenize(request) {
      if (request.input.case === "text" && request.input.value === "boom") throw new Error("a bug");
      return new Promise(() => undefined); // never answers
    },
  };
  return { impl: impl as ServiceImpl<typeof InferenceService>, seen };
}

describe("the in-process transport", () => {
  it("streams every message and never shares the request with the handler", async () => {
    const { impl, seen } = fakeService(3);
    const client = createClient(InferenceService, inProcessTransport(impl, new AbortController().signal));
    const request = create(GenerateRequestSchema, { model: "m", maxTokens: 3 });
    const texts: string[] = [];
    for await (const m of client.generate(request)) if (m.event.case === "token") texts.push(m.event.value.text);
    expect(texts).toEqual(["t0", "t1", "t2"]);
    expect(request.maxTokens).toBe(3);
    expect(seen.request?.maxTokens).toBe(999);
    expect(seen.request).not.toBe(request);
    expect(seen.context?.signal.aborted).toBe(false);
  });

  it("aborts the handler's signal when the caller aborts, and the caller's read fails as Canceled", async () => {
    const { impl, seen } = fakeService(1000);
    const client = createClient(InferenceService, inProcessTransport(impl, new AbortController().signal));
    const caller = new AbortController();
    let read = 0;
    const error = await (async () => {
      for await (const _ of client.generate({ model: "m" }, { signal: caller.signal }))
        if (++read === 3) caller.abort();
    })().catch((e: unknown) => e);
    expect(ConnectError.from(error).code).toBe(Code.Canceled);
    expect(seen.context?.signal.aborted).toBe(true);
    const sent = seen.sent;
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.sent).toBe(sent);
    expect(sent).toBeLessThan(10);
  });

  it("aborts every call when the sidecar shuts down, and a call past its deadline", async () => {
    const shutdown = new AbortController();
    const { impl, seen } = fakeService(1000);
    const client = createClient(InferenceService, inProcessTransport(impl, shutdown.signal));
    const reading = (async () => {
      for await (const _ of client.generate({ model: "m" })) if (seen.sent === 2) shutdown.abort();
    })().catch((e: unknown) => e);
    expect(ConnectError.from(await reading).code).toBe(Code.Canceled);
    expect(seen.context?.signal.aborted).toBe(true);
    const late = await client
      .tokenize({ model: "m", input: { case: "text", value: "x" } }, { timeoutMs: 30 })
      .catch((e: unknown) => e);
    expect(ConnectError.from(late).code).toBe(Code.Canceled);
  });

  it("turns a handler's plain error into a ConnectError", async () => {
    const { impl } = fakeService(0);
    const client = createClient(InferenceService, inProcessTransport(impl, new AbortController().signal));
    const error = await client.tokenize({ model: "m", input: { case: "text", value: "boom" } }).catch((e) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).rawMessage).toBe("a bug");
  });
});

describe("the sidecar over the in-process transport", () => {
  let sidecar: RunningSidecar;
  beforeAll(async () => {
    sidecar = await startTestSidecar();
  });
  afterAll(async () => {
    await sidecar.stop();
  });

  it("refuses a prompt longer than the context exactly as over gRPC-Web: code, message and PromptTooLong", async () => {
    const refusals = [];
    for (const transport of ["grpc-web", "in-process"] as const) {
      const client = transportsOf(sidecar)[transport];
      const prompt = "Once upon a time ".repeat(200);
      const error = await (async () => {
        for await (const _ of client.generate({ input: { case: "prompt", value: prompt } })) {
          // nothing comes before the refusal
        }
      })().catch((e: unknown) => ConnectError.from(e));
      const [detail] = (error as ConnectError).findDetails(PromptTooLongSchema);
      refusals.push({
        code: (error as ConnectError).code,
        message: (error as ConnectError).rawMessage,
        detail: { promptTokens: detail?.promptTokens, contextSize: detail?.contextSize },
      });
    }
    expect(refusals[0]?.code).toBe(Code.InvalidArgument);
    expect(refusals[0]?.detail).toEqual({ promptTokens: 1001, contextSize: 256 });
    expect(refusals[1]).toEqual(refusals[0]);
  });
});
