// Stored responses under workerd (`wrangler dev` with the D1 binding, migrations/ applied to its
// local database first, as `npm start` does) in front of a real sidecar and the scripted model,
// through the official `openai` client: a streamed turn, then a turn on previous_response_id.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSidecar } from "../../sidecar/server.js";
import { CHAT_REPLY, chatPromptTokens } from "../support/scripted.js";
import { startWranglerStack, type WranglerStack } from "../support/edge.js";
import type { Wrangler } from "../support/wrangler.js";

let stack: WranglerStack;
let sidecar: RunningSidecar;
let wrangler: Wrangler;
let client: OpenAI;
beforeAll(async () => {
  stack = await startWranglerStack();
  ({ sidecar, wrangler } = stack);
  client = new OpenAI({ baseURL: `${wrangler.url}/v1`, apiKey: "not-needed", maxRetries: 0 });
}, 120_000);
afterAll(() => stack?.stop());

describe("stored responses under wrangler dev (D1)", () => {
  it("continues a streamed response with previous_response_id; retrieve, input_items, delete", async () => {
    const stream = await client.responses.create({ model: "m", input: "Hello!", stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === "response.completed") completed = event.response;
    const first = completed as OpenAI.Responses.Response;
    expect(first).toMatchObject({ status: "completed", output_text: CHAT_REPLY, previous_response_id: null });
    expect(first.usage?.input_tokens).toBe(await chatPromptTokens(sidecar.url, "Hello!"));

    const second = await client.responses.create({ model: "m", input: "And tomorrow?", previous_response_id: first.id });
    expect(second).toMatchObject({ status: "completed", output_text: CHAT_REPLY, previous_response_id: first.id });
    expect(second.usage?.input_tokens).toBeGreaterThan((first.usage?.input_tokens ?? 0) + (first.usage?.output_tokens ?? 0));
    expect(second.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);

    const { _request_id: _a, ...retrieved } = await client.responses.retrieve(first.id);
    expect(retrieved).toEqual(JSON.parse(JSON.stringify(first)) as unknown);
    const items = (await client.responses.inputItems.list(second.id)).data;
    expect(items).toEqual([{ id: expect.stringMatching(/^msg_/), type: "message", role: "user", content: [{ type: "input_text", text: "And tomorrow?" }] }]);
    expect(await client.responses.delete(first.id)).toMatchObject({ id: first.id, object: "response", deleted: true });
    expect(await client.responses.retrieve(first.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });
});
