// The sidecar takes back what it made (docs/decisions.md, "The server takes back what it made"): a
// tool call whose id this project's sidecars issued goes back to the chat template as it was
// produced, unfinished arguments included (a reply cut by its token limit); any other call's
// arguments must be JSON. Over real gRPC on the `tools` model, rendered by node-llama-cpp's Qwen
// wrapper (the file's own template) and by the same template as a Jinja preset.
import { ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS_TEMPLATE } from "../../gguf/tools-template.js";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { isOwnCallId, newCallId } from "../../sidecar/engine/chat/own-calls.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startCatalogue } from "../support/catalogue.js";
import { TOOL_RESULT_REASONING, TOOLS_ANSWER } from "../support/scripted.js";
import { clientsFor, collect } from "../support/sidecar.js";

describe("call ids", () => {
  it("are call_ and 24 characters, the last 4 checking the others", () => {
    const id = newCallId();
    expect(id).toMatch(/^call_[A-Za-z0-9_-]{24}$/);
    expect(isOwnCallId(id)).toBe(true);
    expect(new Set(Array.from({ length: 100 }, newCallId)).size).toBe(100);
    // Another server's id of the same shape, and one of ours with a character changed.
    expect(isOwnCallId("call_Ab12Cd34Ef56Gh78Ij90Kl12")).toBe(false);
    const changed = `${id.slice(0, 8)}${id[8] === "A" ? "B" : "A"}${id.slice(9)}`;
    expect(isOwnCallId(changed)).toBe(false);
    expect(isOwnCallId(`${id}x`)).toBe(false);
  });
});

const tools = [
  {
    name: "get_weather",
    description: "Get weather for a city",
    parameters: JSON.stringify({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
  },
];

/** A history whose call was cut after `{"city` (max tokens), then its result. */
const history = (id: string) => [
  { role: Role.USER, content: "Weather in Tokyo?" },
  { role: Role.ASSISTANT, toolCalls: [{ id, name: "get_weather", arguments: '{"city' }] },
  { role: Role.TOOL, toolCallId: id, content: '{"temperature":22,"sky":"sunny"}' },
];

describe.each([
  ["the Qwen wrapper", {}],
  ["a Jinja template", { presets: { tools: { chatTemplate: TOOLS_TEMPLATE } } }],
])("a call cut mid-arguments, rendered by %s", (_name, sources) => {
  let sidecar: RunningSidecar;
  beforeAll(async () => {
    sidecar = await startCatalogue(["tools"], { contextSize: 1024 }, sources);
  }, 60_000);
  afterAll(async () => {
    await sidecar?.stop();
  });

  it("one this sidecar made goes back as it was produced, and the model answers its result", async () => {
    const client = clientsFor(sidecar.url).grpc;
    const chat = { tools, messages: history(newCallId()) };
    const { pieces } = await client.tokenize({
      model: "tools",
      input: { case: "chat", value: chat },
      withPieces: true,
    });
    expect(Buffer.concat(pieces).toString("utf8")).toContain(
      '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": ' +
        '{"city}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>',
    );
    const events = await collect(
      client.generate({
        model: "tools",
        input: { case: "chat", value: chat },
        sampling: { temperature: 0 },
        maxTokens: 64,
      }),
    );
    const parts = events.flatMap((e) => (e.case === "token" || e.case === "finish" ? [e.value] : []));
    expect(parts.map((p) => p.reasoning).join("")).toBe(TOOL_RESULT_REASONING);
    expect(parts.map((p) => p.text).join("")).toBe(TOOLS_ANSWER);
  });

  it("another's is refused: its arguments must be JSON", async () => {
    const chat = { tools, messages: history("call_Ab12Cd34Ef56Gh78Ij90Kl12") };
    const refused = await clientsFor(sidecar.url)
      .grpc.tokenize({ model: "tools", input: { case: "chat", value: chat } })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).rawMessage).toBe(
      'tool call "call_Ab12Cd34Ef56Gh78Ij90Kl12" of chat message 1 has arguments that are not valid JSON',
    );
  });
});
