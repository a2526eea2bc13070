// POST /tokenize and /detokenize in llama.cpp's server shape and vLLM's, through the edge on Node
// and the real sidecar (scripted model), checked against the sidecar's own Tokenize RPC.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { startStack, type Stack } from "../support/edge.js";
import { clientsFor } from "../support/sidecar.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

const post = async (path: string, body: unknown) => {
  const response = await fetch(`${stack.edge.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
};

const TEXT = "Once upon a time 🦙";

describe("tokenizer endpoints", () => {
  it(
    "llama.cpp's shape: the text's own tokens, the beginning-of-sequence token only when asked, pieces on " + "request",
    async () => {
      const rpc = await clientsFor(stack.sidecar.url).grpc.tokenize({ input: { case: "text", value: TEXT } });
      const [bos, ...own] = rpc.tokens;
      expect(await post("/tokenize", { content: TEXT })).toEqual({ status: 200, json: { tokens: own } });
      expect(await post("/tokenize", { content: TEXT, add_special: true })).toEqual({
        status: 200,
        json: { tokens: [bos, ...own] },
      });
      const { json } = await post("/tokenize", { content: TEXT, with_pieces: true });
      const pieces = (json["tokens"] as { id: number; piece: string | number[] }[]).map((t) => t.piece);
      expect((json["tokens"] as { id: number }[]).map((t) => t.id)).toEqual(own);
      // Whole UTF-8 pieces as text, the llama's four byte tokens as their bytes.
      expect(pieces.filter((p) => typeof p === "string").join("")).toBe("Once upon a time ");
      expect(Buffer.from(pieces.filter((p): p is number[] => Array.isArray(p)).flat()).toString("utf8")).toBe("🦙");
    },
  );

  it(
    "vLLM's shape: count, max_model_len and tokens, special tokens added unless told not to; chat messages as the " +
      "template renders them",
    async () => {
      const rpc = await clientsFor(stack.sidecar.url).grpc.tokenize({ input: { case: "text", value: TEXT } });
      const { models } = await clientsFor(stack.sidecar.url).grpc.listModels({});
      const contextSize = models[0]?.contextSize;
      expect(await post("/tokenize", { prompt: TEXT })).toEqual({
        status: 200,
        json: { count: rpc.tokens.length, max_model_len: contextSize, tokens: rpc.tokens },
      });
      expect((await post("/tokenize", { prompt: TEXT, add_special_tokens: false })).json["tokens"]).toEqual(
        rpc.tokens.slice(1),
      );
      const chat = await clientsFor(stack.sidecar.url).grpc.tokenize({
        input: { case: "chat", value: { messages: [{ role: Role.USER, content: "Hello!" }] } },
      });
      expect((await post("/tokenize", { messages: [{ role: "user", content: "Hello!" }] })).json["tokens"]).toEqual(
        chat.tokens,
      );
    },
  );

  it("special-token text is read as the token, as llama-server reads it, unless parse_special is false", async () => {
    const chat = "<|im_start|>user\nHi<|im_end|>";
    const rpc = await clientsFor(stack.sidecar.url).grpc.tokenize({
      input: { case: "text", value: chat },
      addSpecial: false,
    });
    const { json } = await post("/tokenize", { content: chat, with_pieces: true });
    const tokens = json["tokens"] as { id: number; piece: string }[];
    expect([tokens[0]?.piece, tokens.at(-1)?.piece]).toEqual(["<|im_start|>", "<|im_end|>"]);
    // Read as plain text (the gRPC default, as a prompt is), the markers are their characters' tokens.
    expect(rpc.tokens).not.toContain(tokens[0]?.id);
    expect(rpc.tokens.length).toBeGreaterThan(tokens.length + 10);
    expect((await post("/tokenize", { content: chat, parse_special: false })).json["tokens"]).toEqual(rpc.tokens);
    expect((await post("/tokenize", { prompt: chat, add_special_tokens: false })).json["tokens"]).toEqual(
      tokens.map((t) => t.id),
    );
  });

  it("detokenizes in both shapes at once, back to the text", async () => {
    const { json } = await post("/tokenize", { content: TEXT });
    expect(await post("/detokenize", { tokens: json["tokens"] })).toEqual({
      status: 200,
      json: { content: TEXT, prompt: TEXT },
    });
  });

  it("refuses a body of neither shape, and a token outside the vocabulary, in OpenAI's error shape", async () => {
    const both = await post("/tokenize", { content: "a", prompt: "b" });
    expect(both.status).toBe(400);
    expect(both.json).toMatchObject({
      error: { type: "invalid_request_error", message: expect.stringContaining("send one of 'content'") },
    });
    const outside = await post("/detokenize", { tokens: [4_000_000] });
    expect(outside.status).toBe(400);
    expect(outside.json).toMatchObject({
      error: { type: "invalid_request_error", message: expect.stringContaining("not in the model's vocabulary") },
    });
  });
});
