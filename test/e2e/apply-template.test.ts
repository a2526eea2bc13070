// See what the model sees: POST /apply-template (llama-server's shape: a chat-completions body in,
// `{"prompt"}` out, special tokens written) and `chat_template_kwargs` passed to the template,
// through the real edge (Node and workerd) and a real sidecar serving the `tools` model and the
// `thinking` model (Qwen3's `enable_thinking` switch in its template).
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ensureModels } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startCatalogue } from "../support/catalogue.js";
import { describeOnRuntimes } from "../support/runtimes.js";
import { THINK_REASONING, TOOLS_ANSWER } from "../support/scripted.js";

let sidecar: RunningSidecar;
beforeAll(async () => {
  await ensureModels("models", ["thinking"]);
  sidecar = await startCatalogue(["tools", "thinking"], { contextSize: 512 });
}, 120_000);
afterAll(async () => {
  await sidecar?.stop();
});

const hello = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Hello!" },
];
/**
 * BOS first: the models' small vocabulary asks for it, and their templates are rendered as llama-server renders them.
 */
const OPENED =
  "<s><|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n";

describeOnRuntimes(
  "the prompt a chat renders to",
  () => [sidecar.url],
  (edge) => {
    const applyTemplate = async (body: object): Promise<{ status: number; json: Record<string, unknown> }> => {
      const response = await fetch(`${edge().url}/apply-template`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    const openai = () => new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: "none", maxRetries: 0 });

    it("POST /apply-template: the model's template, special tokens written out", async () => {
      expect(await applyTemplate({ model: "tools", messages: hello })).toEqual({
        status: 200,
        json: { prompt: OPENED },
      });
      expect(await applyTemplate({ model: "thinking", messages: hello })).toEqual({
        status: 200,
        json: { prompt: OPENED },
      });
    });

    it(
      "chat_template_kwargs reach the template: enable_thinking false closes the reasoning segment in the " + "prompt",
      async () => {
        const off = { model: "thinking", messages: hello, chat_template_kwargs: { enable_thinking: false } };
        expect(await applyTemplate(off)).toEqual({ status: 200, json: { prompt: `${OPENED}<think>\n\n</think>\n\n` } });
        const answered = await openai().chat.completions.create({
          ...off,
          max_tokens: 64,
          temperature: 0,
        } as OpenAI.ChatCompletionCreateParamsNonStreaming);
        const message = answered.choices[0]?.message as { content: string | null; reasoning_content?: string };
        expect([message.content, message.reasoning_content]).toEqual([TOOLS_ANSWER, undefined]);
        // Without them the model reasons first.
        const on = await openai().chat.completions.create({
          model: "thinking",
          messages: hello as never,
          max_tokens: 64,
          temperature: 0,
        });
        expect((on.choices[0]?.message as { reasoning_content?: string } | undefined)?.reasoning_content).toBe(
          THINK_REASONING,
        );
      },
    );

    it("refuses template variables the server sets itself, or that are not an object, in OpenAI's shape", async () => {
      const reserved = await applyTemplate({
        model: "thinking",
        messages: hello,
        chat_template_kwargs: { messages: [] },
      });
      expect(reserved).toEqual({
        status: 400,
        json: {
          error: {
            message: 'the chat template variable "messages" is set by the server and cannot be given',
            type: "invalid_request_error",
            param: null,
            code: null,
          },
        },
      });
      const notObject = await applyTemplate({ model: "thinking", messages: hello, chat_template_kwargs: [true] });
      expect(notObject.status).toBe(400);
      expect((notObject.json["error"] as { param: string }).param).toBe("chat_template_kwargs");
    });
  },
);
