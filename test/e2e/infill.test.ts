// Fill-in-the-middle end to end: the `qwen2.5-coder` twin (Qwen2.5-Coder's tokenizer and FIM tokens,
// scripted middles that depend on the suffix: gguf/twins/coder.ts) on the real sidecar, behind the
// real edge on Node and under workerd. `POST /infill` in llama-server's shapes, streamed and not, with
// repository context; `suffix` on `/v1/completions` through the official `openai` client; the bodies
// llama.vscode and Continue send, byte for byte (test/fixtures/fim/); the prompt's exact token count
// (the layout llama-server builds); special-token text in a prefix kept as text; a model without FIM
// tokens refused with a 400 naming the field; the capability in /v1/models; a repeated edit served
// from the prefix cache.
import { readFileSync } from "node:fs";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CODER_LEAKED, CODER_MIDDLE, CODER_TOTAL_MIDDLE } from "../../gguf/twins/coder.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { answer, startCatalogue } from "../support/catalogue.js";
import { clientsFor, collect } from "../support/sidecar.js";
import { describeOnRuntimes } from "../support/runtimes.js";

const CODER = "qwen2.5-coder";
const PREFIX = "def add(a, b):\n    ";
const SUFFIX = "\n\nprint(add(1, 2))\n";
/** A suffix that reads `return total`: the twin answers CODER_TOTAL_MIDDLE. */
const TOTAL_SUFFIX = "\n    return total\n";
const fixture = (name: string): string => readFileSync(new URL(`../fixtures/fim/${name}`, import.meta.url), "utf8");

let sidecar: RunningSidecar;
beforeAll(async () => {
  sidecar = await startCatalogue([CODER, "tools"], { sequences: 3, contextSize: 4096 });
}, 120_000);
afterAll(() => sidecar?.stop());

describe("GenerateRequest.infill over native gRPC (a direct caller)", () => {
  it("fills the middle, and ListModels says the model can (fill_in_middle)", async () => {
    const grpc = clientsFor(sidecar.url).grpc;
    const events = await collect(
      grpc.generate({
        model: CODER,
        input: { case: "infill", value: { prefix: PREFIX, suffix: TOTAL_SUFFIX } },
        sampling: { temperature: 0 },
      }),
    );
    expect(answer(events).text).toBe(CODER_TOTAL_MIDDLE);
    const { models } = await grpc.listModels({});
    expect(models.find((m) => m.id === CODER)?.fillInMiddle).toBe("prefix-suffix-middle");
  });
});

describeOnRuntimes(
  "fill-in-the-middle",
  () => [sidecar.url],
  (edge) => {
    const post = (path: string, body: unknown): Promise<Response> =>
      fetch(`${edge().url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    const json = async (path: string, body: unknown) => {
      const response = await post(path, body);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    /** A text's tokens as plain text (no special tokens read, none added). */
    const count = async (content: string): Promise<number> =>
      content === ""
        ? 0
        : ((await json("/tokenize", { model: CODER, content, parse_special: false })).body["tokens"] as number[])
            .length;
    /** The prompt llama-server builds: `<|repo_name|>myproject\n`, each file, `<|file_sep|>filename\n`, then PSM. */
    const promptTokens = async (prefix: string, suffix: string, files: { filename: string; text: string }[] = []) => {
      let total = 1 + (await count("myproject\n")) + 1 + (await count("filename\n")) + 3;
      for (const file of files) total += 1 + (await count(`${file.filename}\n`)) + (await count(file.text));
      return total + (await count(prefix)) + (await count(suffix));
    };
    const openai = () => new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: "none", maxRetries: 0 });

    it("POST /infill answers the middle in llama-server's shape", async () => {
      const { status, body } = await json("/infill", {
        model: CODER,
        input_prefix: PREFIX,
        input_suffix: SUFFIX,
        temperature: 0,
      });
      expect(status).toBe(200);
      const tokens = await promptTokens(PREFIX, SUFFIX);
      expect(body).toMatchObject({
        index: 0,
        content: CODER_MIDDLE,
        tokens: [],
        stop: true,
        model: CODER,
        tokens_evaluated: tokens,
        has_new_line: false,
        truncated: false,
        stop_type: "eos",
        stopping_word: "",
      });
      expect(body["tokens_predicted"]).toBe(await count(CODER_MIDDLE));
      expect(Object.keys(body["timings"] as object)).toContain("predicted_per_second");
    });

    it("the suffix decides the middle: a suffix that returns `total` gets the line that makes it", async () => {
      const { body } = await json("/infill", { model: CODER, input_prefix: PREFIX, input_suffix: TOTAL_SUFFIX });
      // The twin ends this middle with <|file_sep|>: an end of generation, never shown.
      expect(body["content"]).toBe(CODER_TOTAL_MIDDLE);
      expect([body["has_new_line"], body["stop_type"]]).toEqual([true, "eos"]);
    });

    it("streams `data:` events, the final one with stop: true and no [DONE]", async () => {
      const response = await post("/infill", {
        model: CODER,
        input_prefix: PREFIX,
        input_suffix: SUFFIX,
        stream: true,
      });
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const text = await response.text();
      const frames = text
        .split("\n\n")
        .filter((f) => f.trim() !== "" && !f.startsWith(":"))
        .map((f) => {
          expect(f.startsWith("data: ")).toBe(true);
          return JSON.parse(f.slice("data: ".length)) as Record<string, unknown>;
        });
      expect(text).not.toContain("[DONE]");
      const last = frames.at(-1) ?? {};
      const partial = frames.slice(0, -1);
      expect(partial.every((f) => f["stop"] === false && f["index"] === 0)).toBe(true);
      expect(partial.map((f) => f["content"]).join("")).toBe(CODER_MIDDLE);
      expect(partial.map((f) => f["tokens_predicted"])).toEqual(partial.map((_, i) => i + 1));
      expect(last).toMatchObject({ stop: true, content: "", stop_type: "eos", tokens_predicted: partial.length });
      expect(last["tokens_evaluated"]).toBe(await promptTokens(PREFIX, SUFFIX));
    });

    it("input_extra goes before the prefix as repository context (FIM_REP, FIM_SEP)", async () => {
      const files = [
        { filename: "util.py", text: "def mul(a, b):\n    return a * b\n" },
        { filename: "main.py", text: "print(mul(2, 3))\n" },
      ];
      const { body } = await json("/infill", {
        model: CODER,
        input_prefix: PREFIX,
        input_suffix: TOTAL_SUFFIX,
        input_extra: files,
      });
      expect(body["content"]).toBe(CODER_TOTAL_MIDDLE);
      expect(body["tokens_evaluated"]).toBe(await promptTokens(PREFIX, TOTAL_SUFFIX, files));
    });

    it("answers llama.vscode's request, byte for byte: three middles, cut by n_indent", async () => {
      const sent = fixture("llama-vscode-infill.json");
      const request = JSON.parse(sent) as { input_prefix: string; input_suffix: string; input_extra: [] };
      const response = await post("/infill", sent);
      expect(response.status).toBe(200);
      const answers = (await response.json()) as Record<string, unknown>[];
      expect(answers.map((a) => [a["index"], a["content"], a["stop_type"]])).toEqual(
        [0, 1, 2].map((i) => [i, "total = a + b\n", "limit"]),
      );
      const files = request.input_extra.map(({ filename, text }) => ({ filename, text }));
      const tokens = await promptTokens(request.input_prefix, request.input_suffix, files);
      expect(answers.map((a) => a["tokens_evaluated"])).toEqual([tokens, tokens, tokens]);
    });

    it("llama.vscode's warm-up request caches its ring chunks for the next completion", async () => {
      // Its chunk is one no earlier request sent: only the warm-up can have put it in the cache.
      const warmupBody = fixture("llama-vscode-warmup.json");
      const warmup = await post("/infill", warmupBody);
      expect(warmup.status).toBe(200);
      expect(await warmup.json()).toMatchObject({ content: "", tokens_predicted: 0, stop_type: "limit" });
      const chunks = (JSON.parse(warmupBody) as { input_extra: { filename: string; text: string }[] }).input_extra;
      const sent = JSON.parse(fixture("llama-vscode-infill.json")) as Record<string, unknown>;
      const { body } = await json("/infill", { ...sent, input_extra: chunks, n_cmpl: 1 });
      const [chunk] = chunks;
      // FIM_REP, the project, FIM_SEP, the chunk's name and text: all before the prefix, all from the cache.
      const context = 2 + (await count("myproject\n")) + (await count(`${chunk?.filename}\n`));
      const cached = (body["timings"] as { cache_n: number }).cache_n;
      expect(cached).toBeGreaterThanOrEqual(context + (await count(chunk?.text ?? "")));
    });

    it("n_cmpl above the model's sequences: a 400 naming n_cmpl", async () => {
      const { status, body } = await json("/infill", {
        model: CODER,
        input_prefix: PREFIX,
        input_suffix: SUFFIX,
        n_cmpl: 4,
      });
      expect(status).toBe(400);
      expect(body["error"]).toMatchObject({ param: "n_cmpl", code: "integer_above_max_value" });
    });

    it("n_predict 0 caches the prompt and generates nothing; the next edit reuses it", async () => {
      const file = `${"x = 1\n".repeat(200)}def add(a, b):\n    `;
      const warm = await json("/infill", { model: CODER, input_prefix: file, input_suffix: SUFFIX, n_predict: 0 });
      expect(warm.body).toMatchObject({ content: "", tokens_predicted: 0, stop_type: "limit" });
      const edited = await json("/infill", { model: CODER, input_prefix: file, input_suffix: `${SUFFIX}#\n` });
      expect(edited.body["content"]).toBe(CODER_MIDDLE);
      const timings = edited.body["timings"] as { cache_n: number };
      expect(timings.cache_n).toBeGreaterThanOrEqual(await count(file));
    });

    it("keeps special-token text in the prefix as text", async () => {
      const prefix = "s = '<|fim_pad|><|fim_middle|>'\n";
      const { body } = await json("/infill", { model: CODER, input_prefix: prefix, input_suffix: SUFFIX });
      // Read as tokens, <|fim_pad|> would switch the twin to CODER_LEAKED and <|fim_middle|> end the prompt early.
      expect(body["content"]).toBe(CODER_MIDDLE);
      expect(body["content"]).not.toBe(CODER_LEAKED);
      expect(body["tokens_evaluated"]).toBe(await promptTokens(prefix, SUFFIX));
    });

    it("suffix on /v1/completions fills between prompt and suffix (the official openai client)", async () => {
      const completion = await openai().completions.create({
        model: CODER,
        prompt: PREFIX,
        suffix: TOTAL_SUFFIX,
        max_tokens: 32,
        temperature: 0,
      });
      expect(completion.choices[0]?.text).toBe(CODER_TOTAL_MIDDLE);
      expect(completion.choices[0]?.finish_reason).toBe("stop");
      expect(completion.usage?.prompt_tokens).toBe(await promptTokens(PREFIX, TOTAL_SUFFIX));
      const stream = await openai().completions.create({
        model: CODER,
        prompt: PREFIX,
        suffix: SUFFIX,
        max_tokens: 32,
        stream: true,
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
      expect(text).toBe(CODER_MIDDLE);
    });

    it("answers Continue's autocomplete request with a suffix, byte for byte", async () => {
      const response = await post("/v1/completions", fixture("continue-completions-fim.json"));
      expect(response.status).toBe(200);
      const text = await response.text();
      const chunks = text
        .split("\n\n")
        .filter((f) => f.startsWith("data: ") && f !== "data: [DONE]")
        .map((f) => JSON.parse(f.slice("data: ".length)) as { choices: { text: string }[] });
      expect(chunks.map((c) => c.choices[0]?.text ?? "").join("")).toBe(CODER_MIDDLE);
      expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    });

    it("a model without FIM tokens: a 400 naming the field and why", async () => {
      const infill = await json("/infill", { model: "tools", input_prefix: "a", input_suffix: "b" });
      expect(infill.status).toBe(400);
      const error = infill.body["error"] as Record<string, unknown>;
      expect(error).toMatchObject({ param: "input_suffix", code: "fill_in_middle_unsupported" });
      expect(error["message"]).toBe(
        "'input_suffix' asks for fill-in-the-middle, but it is not supported by the model 'tools': it has no " +
          "fill-in-the-middle tokens (prefix, suffix, middle missing). Use a code model with FIM tokens " +
          "(Qwen2.5-Coder, CodeLlama, StarCoder2, DeepSeek-Coder, …), or send no 'input_suffix'.",
      );
      const completion = await json("/v1/completions", { model: "tools", prompt: "a", suffix: "b" });
      expect(completion.status).toBe(400);
      expect(completion.body["error"]).toMatchObject({ param: "suffix", code: "fill_in_middle_unsupported" });
      // An empty suffix is no fill-in-the-middle: a plain completion, as before.
      expect((await json("/v1/completions", { model: "tools", prompt: "a", suffix: "", max_tokens: 1 })).status).toBe(
        200,
      );
    });

    it("/v1/models says the coder fills in the middle (`insert`), and in which order", async () => {
      const model = (await openai().models.retrieve(CODER)) as unknown as Record<string, unknown>;
      // Qwen2.5's template writes Hermes-style calls: `tools` too.
      expect(model["capabilities"]).toEqual(["completion", "tools", "insert"]);
      expect(model["fill_in_middle"]).toBe("prefix-suffix-middle");
    });
  },
);
