// Stored responses on the Node edge (SQLite in a temporary file) in front of a real sidecar and
// the scripted model, through the official `openai` client: previous_response_id carries the
// earlier input and output (turn 2's prompt counts turn 1 and reuses its cache), retrieve returns
// what create answered, input_items lists the request's own items, delete, store: false,
// item_reference, and each key's responses kept from every other key. A streamed turn continued
// on previous_response_id, then retrieve, input_items and delete, also run on both runtimes, each
// with a fresh store: Node (SQLite) and workerd (`wrangler dev`, D1).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { type APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessFromEnv, startNodeEdge } from "../../edge/hosts/node/main.js";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { startStack, type Stack } from "../support/edge.js";
import { describeOnRuntimes } from "../support/runtimes.js";
import { CHAT_REPLY, chatPromptTokens } from "../support/scripted.js";
import { sealCompaction, SUMMARY_OPENING } from "../../edge/protocols/openai-responses/compaction/compaction-prompt.js";
import { clientsFor } from "../support/sidecar.js";
import { readEvents } from "../support/sse.js";

const dir = mkdtempSync(join(tmpdir(), "llm-edge-responses-"));
let stack: Stack;
let client: OpenAI;
beforeAll(async () => {
  stack = await startStack({ sequences: 2, contextSize: 1024 }, { storePath: join(dir, "store.sqlite") });
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: "not-needed", maxRetries: 0 });
}, 90_000);
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

type Message = { role: Role; content: string };

/** The sidecar's own count of the rendered conversation. */
async function promptTokens(messages: readonly Message[]): Promise<number> {
  const { tokens } = await clientsFor(stack.sidecar.url).grpc.tokenize({
    input: { case: "chat", value: { messages: [...messages] } },
  });
  return tokens.length;
}

const user = (content: string): Message => ({ role: Role.USER, content });
const reply: Message = { role: Role.ASSISTANT, content: CHAT_REPLY };

describe("stored responses through the openai client", () => {
  it("continues a response with previous_response_id; instructions are not carried over", async () => {
    const first = await client.responses.create({ model: "m", instructions: "Be brief.", input: "Hello!" });
    expect(first).toMatchObject({ store: true, previous_response_id: null, output_text: CHAT_REPLY });
    const second = await client.responses.create({
      model: "m",
      input: "And tomorrow?",
      previous_response_id: first.id,
    });
    expect(second).toMatchObject({
      store: true,
      previous_response_id: first.id,
      instructions: null,
      output_text: CHAT_REPLY,
    });
    expect(second.usage?.input_tokens).toBe(await promptTokens([user("Hello!"), reply, user("And tomorrow?")]));
    // Without the instructions the first prompt is no prefix of the second (they share the template's
    // header only); the third continues the second exactly, so the second's whole prompt is cached.
    const third = await client.responses.create({ model: "m", input: "And then?", previous_response_id: second.id });
    expect(third.usage?.input_tokens).toBe(
      await promptTokens([user("Hello!"), reply, user("And tomorrow?"), reply, user("And then?")]),
    );
    expect(third.usage?.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(
      second.usage?.input_tokens ?? Number.POSITIVE_INFINITY,
    );
  });

  it(
    "context_management compacts a stored chain; the next turn continues from the stored compaction " + "item",
    async () => {
      const first = await client.responses.create({ model: "m", input: "Hello!" });
      const context_management = [{ type: "compaction" as const, compact_threshold: 1 }];
      const second = await client.responses.create({
        model: "m",
        input: "And tomorrow?",
        previous_response_id: first.id,
        context_management,
      });
      expect(second.output.map((item) => item.type)).toEqual(["compaction", "message"]);
      expect(second.output[0]).toMatchObject({ encrypted_content: sealCompaction(CHAT_REPLY) });
      const summary = user(`${SUMMARY_OPENING}${CHAT_REPLY}`);
      expect(second.usage?.input_tokens).toBe(await promptTokens([user("Hello!"), user("And tomorrow?"), summary]));
      expect(await client.responses.retrieve(second.id)).toEqual(second);
      const third = await client.responses.create({ model: "m", input: "And then?", previous_response_id: second.id });
      expect(third.output.map((item) => item.type)).toEqual(["message"]);
      expect(third.usage?.input_tokens).toBe(
        await promptTokens([user("Hello!"), user("And tomorrow?"), summary, reply, user("And then?")]),
      );
    },
  );

  it("retrieve returns what create answered, streamed or not", async () => {
    const created = await client.responses.create({ model: "m", input: "Hello!" });
    expect(await client.responses.retrieve(created.id)).toEqual(created);

    const stream = await fetch(`${stack.baseURL}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "Hello!", stream: true }),
    });
    const events = await readEvents(stream.body as ReadableStream<Uint8Array>);
    const completed = events.find((e) => e.event === "response.completed");
    const response = (JSON.parse(completed?.data ?? "{}") as { response: { id: string } }).response;
    expect(response).toMatchObject({ store: true, status: "completed" });
    expect(await client.responses.retrieve(response.id)).toEqual(response);
  });

  it("lists the request's own input items with ids, newest first; order, limit and after page them", async () => {
    const created = await client.responses.create({
      model: "m",
      instructions: "Be brief.",
      input: [
        { role: "user", content: "Hello!" },
        { role: "assistant", content: "Hi." },
        { role: "user", content: [{ type: "input_text", text: "Weather?" }] },
      ],
    });
    const page = await client.responses.inputItems.list(created.id);
    const texts = page.data.map((item) =>
      item.type === "message" ? item.content.map((p) => ("text" in p ? p.text : "")).join("") : "",
    );
    expect(texts).toEqual(["Weather?", "Hi.", "Hello!"]);
    expect(page.data.map((item) => item.id)).toEqual(expect.arrayContaining([expect.stringMatching(/^msg_/)]));
    expect(page.data[2]).toEqual({
      id: page.data[2]?.id,
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "Hello!" }],
    });

    const asc = await fetch(`${stack.baseURL}/responses/${created.id}/input_items?order=asc&limit=2`).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
    const ids = [...page.data].reverse().map((item) => item.id);
    expect(asc).toEqual({
      object: "list",
      data: [expect.objectContaining({ id: ids[0] }), expect.objectContaining({ id: ids[1] })],
      first_id: ids[0],
      last_id: ids[1],
      has_more: true,
    });
    const rest = await fetch(`${stack.baseURL}/responses/${created.id}/input_items?order=asc&after=${ids[1]}`).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
    expect(rest).toMatchObject({ first_id: ids[2], last_id: ids[2], has_more: false });
  });

  it("delete, then retrieve is a 404; store: false stores nothing", async () => {
    const created = await client.responses.create({ model: "m", input: "Hello!" });
    expect(await client.responses.delete(created.id)).toMatchObject({
      id: created.id,
      object: "response",
      deleted: true,
    });
    const gone = await client.responses.retrieve(created.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect((gone as APIError).error).toEqual({
      message: `Response with id '${created.id}' not found.`,
      type: "invalid_request_error",
      param: null,
      code: "response_not_found",
    });

    const unstored = await client.responses.create({ model: "m", input: "Hello!", store: false });
    expect((unstored as unknown as { store: boolean }).store).toBe(false);
    expect(await client.responses.retrieve(unstored.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    const next = await client.responses
      .create({ model: "m", input: "Hi", previous_response_id: unstored.id })
      .catch((e: unknown) => e);
    expect(next).toBeInstanceOf(OpenAI.BadRequestError);
    expect((next as APIError).error).toEqual({
      message: `Previous response with id '${unstored.id}' not found.`,
      type: "invalid_request_error",
      param: "previous_response_id",
      code: "previous_response_not_found",
    });
  });

  it("an item_reference is the stored item it names; an unknown one is a 400 naming input[i].id", async () => {
    const first = await client.responses.create({ model: "m", input: "Hello!" });
    const answer = first.output[0]?.id ?? "";
    const [asked] = (await client.responses.inputItems.list(first.id)).data;
    const second = await client.responses.create({
      model: "m",
      input: [
        { type: "item_reference", id: asked?.id ?? "" },
        { type: "item_reference", id: answer },
        { role: "user", content: "And tomorrow?" },
      ],
    });
    expect(second.usage?.input_tokens).toBe(await promptTokens([user("Hello!"), reply, user("And tomorrow?")]));
    const items = (await client.responses.inputItems.list(second.id, { order: "asc" })).data;
    expect(items.slice(0, 2)).toEqual([asked, first.output[0]]);

    const unknown = await client.responses
      .create({
        model: "m",
        input: [
          { role: "user", content: "Hi" },
          { type: "item_reference", id: "msg_nope" },
        ],
      })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.BadRequestError);
    expect((unknown as APIError).error).toEqual({
      message: "Item with id 'msg_nope' not found.",
      type: "invalid_request_error",
      param: "input[1].id",
      code: null,
    });
  });
});

describe("a chain that outgrows the context", () => {
  it("is a 400 naming the limit (context_length_exceeded)", async () => {
    const context = stack.sidecar.models[0]?.contextSize ?? 0;
    const long = "sunny ".repeat(Math.floor(context / 2));
    const first = await client.responses.create({ model: "m", input: long });
    expect(first.usage?.input_tokens).toBeLessThan(context);
    const refused = await client.responses
      .create({ model: "m", input: long, previous_response_id: first.id })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as APIError).code).toBe("context_length_exceeded");
    expect(((refused as APIError).error as { message: string }).message).toMatch(
      new RegExp(
        `^This model's maximum context length is ${context} tokens\\. However, your messages resulted in \\d+ ` +
          `tokens\\.`,
      ),
    );
  });
});

describe("ownership", () => {
  it("keeps each key's responses from every other key: a 404, never the object", async () => {
    const keyed = await startNodeEdge({
      sidecarUrl: stack.sidecar.url,
      port: 0,
      storePath: join(dir, "keys.sqlite"),
      access: accessFromEnv({ API_KEYS: "key-one,key-two" }),
    });
    try {
      const one = new OpenAI({ baseURL: `${keyed.url}/v1`, apiKey: "key-one", maxRetries: 0 });
      const two = new OpenAI({ baseURL: `${keyed.url}/v1`, apiKey: "key-two", maxRetries: 0 });
      const created = await one.responses.create({ model: "m", input: "Hello!" });
      expect(await two.responses.retrieve(created.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
      expect(await two.responses.inputItems.list(created.id).catch((e: unknown) => e)).toBeInstanceOf(
        OpenAI.NotFoundError,
      );
      expect(await two.responses.delete(created.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
      const continued = await two.responses
        .create({ model: "m", input: "Hi", previous_response_id: created.id })
        .catch((e: unknown) => e);
      expect(continued).toBeInstanceOf(OpenAI.BadRequestError);
      expect((continued as APIError).code).toBe("previous_response_not_found");
      const reference = await two.responses
        .create({ model: "m", input: [{ type: "item_reference", id: created.output[0]?.id ?? "" }] })
        .catch((e: unknown) => e);
      expect(reference).toBeInstanceOf(OpenAI.BadRequestError);
      expect(await one.responses.retrieve(created.id)).toEqual(created);
    } finally {
      await keyed.close();
    }
  });
});

// Last, so that its turns leave nothing in the sidecar's cache for the suites above.
describeOnRuntimes(
  "stored responses, a fresh store",
  () => [stack.sidecar.url],
  (edge) => {
    it("continues a streamed response with previous_response_id; retrieve, input_items, delete", async () => {
      const client = new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: "not-needed", maxRetries: 0 });
      const stream = await client.responses.create({ model: "m", input: "Hello!", stream: true });
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of stream) if (event.type === "response.completed") completed = event.response;
      const first = completed as OpenAI.Responses.Response;
      expect(first).toMatchObject({ status: "completed", output_text: CHAT_REPLY, previous_response_id: null });
      expect(first.usage?.input_tokens).toBe(await chatPromptTokens(stack.sidecar.url, "Hello!"));

      const second = await client.responses.create({
        model: "m",
        input: "And tomorrow?",
        previous_response_id: first.id,
      });
      expect(second).toMatchObject({ status: "completed", output_text: CHAT_REPLY, previous_response_id: first.id });
      expect(second.usage?.input_tokens).toBeGreaterThan(
        (first.usage?.input_tokens ?? 0) + (first.usage?.output_tokens ?? 0),
      );
      expect(second.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);

      const { _request_id: _a, ...retrieved } = await client.responses.retrieve(first.id);
      expect(retrieved).toEqual(JSON.parse(JSON.stringify(first)) as unknown);
      const items = (await client.responses.inputItems.list(second.id)).data;
      expect(items).toEqual([
        {
          id: expect.stringMatching(/^msg_/),
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "And tomorrow?" }],
        },
      ]);
      expect(await client.responses.delete(first.id)).toMatchObject({
        id: first.id,
        object: "response",
        deleted: true,
      });
      expect(await client.responses.retrieve(first.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
      // Deleted: continuing it is OpenAI's 400 previous_response_not_found, on either runtime.
      const gone = await client.responses
        .create({ model: "m", input: "Hi", previous_response_id: first.id })
        .catch((e: unknown) => e);
      expect(gone).toBeInstanceOf(OpenAI.BadRequestError);
      expect((gone as APIError).error).toEqual({
        message: `Previous response with id '${first.id}' not found.`,
        type: "invalid_request_error",
        param: "previous_response_id",
        code: "previous_response_not_found",
      });
    });
  },
);
