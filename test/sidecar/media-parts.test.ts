// A chat message's `parts` on a text-only model: text parts read exactly as the same text in `content` (the same
// prompt tokens, the same reply), and a media part is INVALID_ARGUMENT naming it, as is a message with both.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { answer } from "../support/catalogue.js";
import { CHAT_REPLY } from "../support/scripted.js";
import { clientsFor, collect, startTestSidecar, type InferenceClient } from "../support/sidecar.js";

let sidecar: RunningSidecar;
let client: InferenceClient;
beforeAll(async () => {
  sidecar = await startTestSidecar({ model: modelPath("tools"), contextSize: 1024 });
  client = clientsFor(sidecar.url).grpc;
}, 60_000);
afterAll(() => sidecar?.stop());

const text = (value: string) => ({ part: { case: "text" as const, value } });
const media = {
  part: { case: "media" as const, value: { data: new Uint8Array([0x89, 0x50]), mimeType: "image/png" } },
};
const chat = (message: object) =>
  collect(
    client.generate({
      input: { case: "chat", value: { messages: [{ role: Role.USER, ...message }] } },
      sampling: { temperature: 0 },
      maxTokens: 64,
    }),
  );

describe("message parts on a text-only model", () => {
  it("text parts are the message's text", async () => {
    const whole = await chat({ content: "What is the weather like?" });
    const parted = await chat({ parts: [text("What is the "), text("weather like?")] });
    expect(answer(parted).text).toBe(CHAT_REPLY);
    const start = (events: typeof whole) => events.find((e) => e.case === "start")?.value;
    expect((start(parted) as { promptTokens: number }).promptTokens).toBe(
      (start(whole) as { promptTokens: number }).promptTokens,
    );
  });

  it("a media part is refused naming it; content and parts together are refused", async () => {
    const refusal = (events: Promise<unknown>) =>
      events.then(
        () => undefined,
        (e: unknown) => [ConnectError.from(e).code, ConnectError.from(e).rawMessage],
      );
    expect(await refusal(chat({ parts: [text("What is this?"), media] }))).toEqual([
      Code.InvalidArgument,
      'model "tools" reads text only (serve a multimodal model with its projector: --mmproj): messages[0].parts[1] ' +
        "is media",
    ]);
    expect(await refusal(chat({ content: "x", parts: [text("y")] }))).toEqual([
      Code.InvalidArgument,
      "messages[0] has both content and parts: send one of them",
    ]);
  });
});
