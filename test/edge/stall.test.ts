// A sidecar that goes silent (not even a heartbeat) for the stall deadline: the call is
// cancelled, a stream ends with the protocol's error event, a JSON request gets a 504 in its
// shape; heartbeats keep a slow call alive.
import { describe, expect, it } from "vitest";
import { post, testApp } from "../support/app.js";
import { delay, finish, start, token, type Step } from "../support/fake-sidecar.js";
import { create } from "@bufbuild/protobuf";
import { GenerateResponseSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { parseText } from "../support/sse.js";

const heartbeat: Step = {
  kind: "event",
  event: create(GenerateResponseSchema, { event: { case: "heartbeat", value: {} } }),
};
const chat = { messages: [{ role: "user", content: "hi" }] };

describe("a stalled sidecar", () => {
  it("a JSON request waiting for start gets 504 sidecar_stalled, and the call is cancelled", async () => {
    const { app, sidecar } = testApp([delay(60_000), start(), finish()], { sidecarStallMs: 200 });
    const response = await post(app, "/v1/chat/completions", chat);
    expect(response.status).toBe(504);
    expect(await response.json()).toMatchObject({ error: { code: "sidecar_stalled", type: "server_error" } });
    expect(sidecar.lastCall?.signal?.aborted).toBe(true);
  });

  it("a started stream ends with the protocol's error event", async () => {
    const { app, sidecar } = testApp([start(), token("Hi"), delay(60_000), finish()], { sidecarStallMs: 200 });
    const events = parseText(
      await (await post(app, "/v1/messages", { model: "m", max_tokens: 8, ...chat, stream: true })).text(),
    );
    const last = events.at(-1);
    expect(last?.event).toBe("error");
    expect(JSON.parse(last?.data ?? "{}")).toMatchObject({
      type: "error",
      error: { message: expect.stringContaining("stopped answering") },
    });
    expect(sidecar.lastCall?.signal?.aborted).toBe(true);
  });

  it("heartbeats keep a slow call alive past the deadline", async () => {
    const slow: Step[] = [
      heartbeat,
      delay(120),
      heartbeat,
      delay(120),
      heartbeat,
      delay(120),
      start(),
      token("Hi"),
      finish("stop", { completionTokens: 1 }),
    ];
    const { app } = testApp([delay(120), ...slow], { sidecarStallMs: 200 });
    const response = await post(app, "/v1/chat/completions", chat);
    expect(response.status).toBe(200);
    expect(
      ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content,
    ).toBe("Hi");
  });
});
