// How sidecar failures (gRPC status codes) reach the client. Before `start`:
// refusals of the request itself (INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE)
// are an `event: error` on a stream (docs/contract.md) and a 400 otherwise; every other code
// keeps a real HTTP status on streams too, because clients act on it (retry, back off). A model
// the sidecar does not know is the protocol's 404; one it could not load, a 500 naming it and why.
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { fromConnectError } from "../../edge/base/errors.js";
import { post, testApp } from "../support/app.js";
import { fail, loadFailed, loadFailure } from "../support/fake-sidecar.js";
import { parseText } from "../support/sse.js";

const chat = { messages: [{ role: "user", content: "Hello!" }] };

const httpCases: { code: Code; status: number; type: string; errorCode: string | null; retryAfter?: string }[] = [
  { code: Code.NotFound, status: 404, type: "invalid_request_error", errorCode: "model_not_found" },
  {
    code: Code.ResourceExhausted,
    status: 429,
    type: "rate_limit_error",
    errorCode: "rate_limit_exceeded",
    retryAfter: "1",
  },
  { code: Code.DeadlineExceeded, status: 504, type: "server_error", errorCode: "timeout" },
  { code: Code.Unavailable, status: 503, type: "server_error", errorCode: "service_unavailable", retryAfter: "1" },
  { code: Code.Internal, status: 500, type: "server_error", errorCode: null },
  { code: Code.Unknown, status: 500, type: "server_error", errorCode: null },
  { code: Code.Unimplemented, status: 500, type: "server_error", errorCode: null },
];

describe.each([false, true])("pre-start failures with stream=%s", (stream) => {
  it.each(httpCases)("gRPC $code → HTTP $status", async (c) => {
    const { app, sidecar } = testApp([fail(c.code, "sidecar says no")]);
    const response = await post(app, "/v1/chat/completions", { ...chat, stream });
    expect(response.status).toBe(c.status);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("retry-after")).toBe(c.retryAfter ?? null);
    expect(await response.json()).toEqual({
      error: { message: "sidecar says no", type: c.type, param: null, code: c.errorCode },
    });
    expect(sidecar.calls).toHaveLength(1);
  });
});

describe.each([Code.InvalidArgument, Code.FailedPrecondition, Code.OutOfRange])(
  "request refused by the sidecar (gRPC %s)",
  (code) => {
    it("streaming: HTTP 200, one `event: error`, no role frame, no [DONE]", async () => {
      const { app } = testApp([fail(code, "the prompt does not fit the context")]);
      const response = await post(app, "/v1/chat/completions", { ...chat, stream: true });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      const events = parseText(await response.text());
      expect(events.map((e) => e.event)).toEqual(["error"]);
      expect(JSON.parse(events[0]?.data ?? "")).toMatchObject({
        message: "the prompt does not fit the context",
        type: "invalid_request_error",
        error: { message: "the prompt does not fit the context", type: "invalid_request_error" },
      });
    });

    it("non-streaming: HTTP 400", async () => {
      const { app } = testApp([fail(code, "the prompt does not fit the context")]);
      const response = await post(app, "/v1/completions", { prompt: "x" });
      expect(response.status).toBe(400);
    });
  },
);

describe("fromConnectError", () => {
  it("honours a retry-after the sidecar sends", () => {
    const error = new ConnectError("busy", Code.ResourceExhausted, { "retry-after": "7" });
    expect(fromConnectError(error).headers).toEqual({ "retry-after": "7" });
  });

  it("uses the raw message, without connect's [code] prefix", () => {
    const error = new ConnectError("model is loading", Code.Unavailable);
    expect(error.message).toBe("[unavailable] model is loading");
    expect(fromConnectError(error).message).toBe("model is loading");
  });

  it("maps every code to a status", () => {
    const statuses = Object.values(Code)
      .filter((v): v is Code => typeof v === "number")
      .map((code) => [Code[code], fromConnectError(new ConnectError("x", code)).status]);
    expect(Object.fromEntries(statuses)).toEqual({
      Canceled: 500,
      Unknown: 500,
      InvalidArgument: 400,
      DeadlineExceeded: 504,
      NotFound: 404,
      AlreadyExists: 409,
      PermissionDenied: 500,
      ResourceExhausted: 429,
      FailedPrecondition: 400,
      Aborted: 500,
      OutOfRange: 400,
      Unimplemented: 500,
      Internal: 500,
      Unavailable: 503,
      DataLoss: 500,
      Unauthenticated: 500,
    });
  });
});

describe("a model the sidecar does not know or could not load", () => {
  const messages = { model: "coder", max_tokens: 8, messages: [{ role: "user", content: "Hello!" }] };
  const reason = "the file is truncated (expected 1048576 bytes of tensor data, found 4096)";
  const loadMessage = `The model 'coder' could not be loaded: ${reason}`;

  it.each([false, true])("NOT_FOUND: OpenAI 404 model_not_found (stream=%s)", async (stream) => {
    const { app } = testApp([fail(Code.NotFound, 'model "coder" is not in the catalogue')]);
    const response = await post(app, "/v1/chat/completions", { ...chat, model: "coder", stream });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: {
        message: 'model "coder" is not in the catalogue',
        type: "invalid_request_error",
        param: null,
        code: "model_not_found",
      },
    });
  });

  it.each([false, true])("NOT_FOUND: Anthropic 404 not_found_error (stream=%s)", async (stream) => {
    const { app } = testApp([fail(Code.NotFound, 'model "coder" is not in the catalogue')]);
    const response = await post(app, "/v1/messages", { ...messages, stream });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      type: "error",
      error: { type: "not_found_error", message: 'model "coder" is not in the catalogue' },
    });
  });

  it.each([
    ["/v1/chat/completions", { ...chat, model: "coder" }],
    ["/v1/chat/completions", { ...chat, model: "coder", stream: true }],
    ["/v1/completions", { model: "coder", prompt: "x" }],
    ["/v1/responses", { model: "coder", input: "x", stream: true }],
  ])("ModelLoadFailed: OpenAI 500 model_load_failed naming the model and why (%s)", async (path, body) => {
    const { app } = testApp([loadFailed("coder", reason)]);
    const response = await post(app, path, body);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: { message: loadMessage, type: "server_error", param: "model", code: "model_load_failed" },
    });
  });

  it("ModelLoadFailed on embeddings: the same 500", async () => {
    const { app, sidecar } = testApp();
    sidecar.embedResult = loadFailure("coder", reason);
    const response = await post(app, "/v1/embeddings", { model: "coder", input: "x" });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: { message: loadMessage, type: "server_error", param: "model", code: "model_load_failed" },
    });
  });

  it.each([false, true])("ModelLoadFailed: Anthropic 500 api_error (stream=%s)", async (stream) => {
    const { app } = testApp([loadFailed("coder", reason)]);
    const response = await post(app, "/v1/messages", { ...messages, stream });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ type: "error", error: { type: "api_error", message: loadMessage } });
  });

  it("INTERNAL without the detail stays a plain 500", () => {
    const error = fromConnectError(new ConnectError("the engine failed", Code.Internal));
    expect([error.status, error.code, error.message]).toEqual([500, null, "the engine failed"]);
  });
});
