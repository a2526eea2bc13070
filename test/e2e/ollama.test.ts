// Ollama's API (/api/*) through the official `ollama` client, with API keys on (a bearer header), on
// Node and under workerd (`wrangler dev`), in front of one real sidecar whose catalogue holds the
// `thinking` twin (reasoning, tools), the `scripted` one (a raw story, embeddings) and the
// `qwen2.5-coder` one (fill-in-the-middle, as Continue's Ollama provider asks for it): chat and
// generate streamed as NDJSON and not, thinking, tools, format, load and unload by an empty request,
// embed and the older embeddings against the sidecar's own Embed, list, show, ps, version (Open
// WebUI's start-up probes), and bad bodies answered in Ollama's `{"error"}` shape.
import { readFileSync } from "node:fs";
import { Ollama, type ChatResponse, type Message } from "ollama";
import { afterAll, beforeAll, expect, it } from "vitest";
import { OLLAMA_VERSION } from "../../edge/protocols/ollama/models.js";
import { CODER_MIDDLE } from "../../gguf/twins/coder.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startCatalogue } from "../support/catalogue.js";
import { CHAT_REPLY, STORY, THINK_REASONING, TOOL_RESULT_REASONING } from "../support/scripted.js";
import { clientsFor } from "../support/sidecar.js";
import { describeOnRuntimes } from "../support/runtimes.js";

const KEY = "ollama-test-key";
const CODER = "qwen2.5-coder";
const AUTH = { Authorization: `Bearer ${KEY}` };

const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

let sidecar: RunningSidecar;
beforeAll(async () => {
  // `story:1b` is a preset's alias of the scripted model, written as Ollama's clients write names.
  const presets = { scripted: { alias: ["story:1b"] } };
  sidecar = await startCatalogue(["thinking", "scripted", CODER], { sequences: 2, contextSize: 1024 }, { presets });
}, 90_000);
afterAll(async () => {
  await sidecar?.stop();
});

/** A stream's parts, and its text and thinking joined. */
async function drain(parts: AsyncIterable<ChatResponse>) {
  const all: ChatResponse[] = [];
  for await (const part of parts) all.push(part);
  return {
    all,
    content: all.map((p) => p.message.content).join(""),
    thinking: all.map((p) => p.message.thinking ?? "").join(""),
    last: all.at(-1),
  };
}

/** The closing fields every answer ends with: integers, nanoseconds, each duration within the total. */
function expectMetrics(answer: Record<string, unknown>, reason: string): void {
  expect(answer).toMatchObject({ done: true, done_reason: reason });
  const names = ["total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count"];
  for (const name of [...names, "eval_duration"]) expect(Number.isInteger(answer[name]), name).toBe(true);
  expect(answer["prompt_eval_count"]).toBeGreaterThan(0);
  expect(answer["eval_count"]).toBeGreaterThan(0);
  const total = answer["total_duration"] as number;
  expect(answer["eval_duration"] as number).toBeLessThanOrEqual(total);
  expect(answer["prompt_eval_duration"] as number).toBeLessThanOrEqual(total);
}

describeOnRuntimes(
  "Ollama's API through the ollama client",
  () => [sidecar.url],
  (edge) => {
    const ollama = () => new Ollama({ host: edge().url, headers: AUTH });
    const post = async (path: string, body: unknown, headers: Record<string, string> = AUTH) => {
      const response = await fetch(`${edge().url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      return { status: response.status, type: response.headers.get("content-type"), json: await response.json() };
    };
    const user = (content: string): Message => ({ role: "user", content });

    it("Open WebUI's start-up probes: version, tags (name:latest), ps", async () => {
      expect(await ollama().version()).toEqual({ version: OLLAMA_VERSION });
      const { models } = await ollama().list();
      expect(models.map((m) => [m.name, m.model, m.details.format])).toEqual([
        ["thinking:latest", "thinking:latest", "gguf"],
        ["scripted:latest", "scripted:latest", "gguf"],
        [`${CODER}:latest`, `${CODER}:latest`, "gguf"],
      ]);
      expect(Array.isArray((await ollama().ps()).models)).toBe(true);
    });

    it("chat, not streamed: the reply, its thinking apart, done_reason and the metrics", async () => {
      const answer = await ollama().chat({ model: "thinking:latest", messages: [user("Weather?")] });
      expect(answer.model).toBe("thinking:latest");
      expect(answer.message).toEqual({ role: "assistant", content: CHAT_REPLY, thinking: THINK_REASONING });
      expectMetrics(answer as unknown as Record<string, unknown>, "stop");
    });

    it("chat, streamed: NDJSON lines, done false until the last, with done_reason and the metrics", async () => {
      const response = await fetch(`${edge().url}/api/chat`, {
        method: "POST",
        headers: AUTH,
        body: JSON.stringify({ model: "thinking", messages: [user("Weather?")] }),
      });
      expect(response.headers.get("content-type")).toBe("application/x-ndjson");
      const lines = (await response.text()).split("\n");
      expect(lines.pop()).toBe("");
      const parts = lines.map((l) => JSON.parse(l) as ChatResponse);
      expect(parts.slice(0, -1).every((p) => !p.done)).toBe(true);
      expect(parts.map((p) => p.message.content).join("")).toBe(CHAT_REPLY);
      expect(parts.map((p) => p.message.thinking ?? "").join("")).toBe(THINK_REASONING);
      expect(parts.at(-1)?.message).toEqual({ role: "assistant", content: "" });
      expectMetrics(parts.at(-1) as unknown as Record<string, unknown>, "stop");
      const streamed = await drain(
        await ollama().chat({ model: "thinking", messages: [user("Weather?")], stream: true }),
      );
      expect([streamed.content, streamed.thinking, streamed.last?.done]).toEqual([CHAT_REPLY, THINK_REASONING, true]);
    });

    it('think: false answers without reasoning; think: "low" is accepted', async () => {
      const plain = await ollama().chat({ model: "thinking", messages: [user("Weather?")], think: false });
      expect(plain.message).toEqual({ role: "assistant", content: CHAT_REPLY });
      const low = await ollama().chat({ model: "thinking", messages: [user("Weather?")], think: "low" });
      expect(low.message.content).toBe(CHAT_REPLY);
    });

    it("logprobs: an entry per generated token, with its alternatives", async () => {
      const answer = await ollama().chat({
        model: "thinking",
        messages: [user("Weather?")],
        think: false,
        logprobs: true,
        top_logprobs: 2,
      });
      expect(answer.message.content).toBe(CHAT_REPLY);
      expect(answer.logprobs).toHaveLength(answer.eval_count);
      for (const entry of answer.logprobs ?? []) {
        expect(entry.logprob).toBeLessThanOrEqual(0);
        // The scripted twin is sure of each token: it is its own first alternative, often the only one.
        expect(entry.top_logprobs?.length).toBeGreaterThanOrEqual(1);
        expect(entry.top_logprobs?.length).toBeLessThanOrEqual(2);
        expect(entry.top_logprobs?.[0]).toMatchObject({ token: entry.token, logprob: entry.logprob });
      }
      const streamed = await drain(
        await ollama().chat({ model: "thinking", messages: [user("Weather?")], logprobs: true, stream: true }),
      );
      const entries = streamed.all.flatMap((part) => part.logprobs ?? []);
      expect(entries).toHaveLength(streamed.last?.eval_count ?? -1);
    });

    it("tools: the call whole, arguments an object, then the answer to its result, streamed and not", async () => {
      const messages = [user("Weather in Tokyo?")];
      const first = await ollama().chat({ model: "thinking", messages, tools: [WEATHER_TOOL] });
      expect(first.message.tool_calls).toEqual([
        {
          id: expect.stringMatching(/^call_/),
          function: { index: 0, name: "get_weather", arguments: { city: "Tokyo" } },
        },
      ]);
      expectMetrics(first as unknown as Record<string, unknown>, "stop");
      const streamedCall = await drain(
        await ollama().chat({ model: "thinking", messages, tools: [WEATHER_TOOL], stream: true }),
      );
      const calls = streamedCall.all.flatMap((p) => p.message.tool_calls ?? []);
      expect(calls.map((c) => c.function)).toEqual([{ index: 0, name: "get_weather", arguments: { city: "Tokyo" } }]);
      // Ollama's history: the call as it came back, the result named by the tool, no id.
      const history: Message[] = [
        ...messages,
        {
          role: "assistant",
          content: "",
          tool_calls: [{ function: { name: "get_weather", arguments: { city: "Tokyo" } } }],
        },
        { role: "tool", content: '{"temperature": 22, "sky": "sunny"}', tool_name: "get_weather" },
      ];
      const answer = await ollama().chat({ model: "thinking", messages: history, tools: [WEATHER_TOOL] });
      expect(answer.message).toEqual({ role: "assistant", content: CHAT_REPLY, thinking: TOOL_RESULT_REASONING });
      const streamed = await drain(
        await ollama().chat({ model: "thinking", messages: history, tools: [WEATHER_TOOL], stream: true }),
      );
      expect([streamed.content, streamed.thinking]).toEqual([CHAT_REPLY, TOOL_RESULT_REASONING]);
    });

    it('format: a JSON schema the reply follows, and "json"', async () => {
      const format = {
        type: "object",
        properties: { sky: { enum: ["sunny"] } },
        required: ["sky"],
        additionalProperties: false,
      };
      const answer = await ollama().chat({ model: "thinking", messages: [user("Weather?")], format, think: false });
      expect(JSON.parse(answer.message.content)).toEqual({ sky: "sunny" });
      const json = await ollama().chat({
        model: "thinking",
        messages: [user("Weather?")],
        format: "json",
        think: false,
        options: { num_predict: 40 },
      });
      expect(json.message.content.startsWith("{")).toBe(true);
    });

    it("generate: through the template, raw, streamed; options reach the sidecar (num_predict)", async () => {
      const templated = await ollama().generate({ model: "thinking", prompt: "Weather?" });
      expect([templated.response, templated.thinking]).toEqual([CHAT_REPLY, THINK_REASONING]);
      expectMetrics(templated as unknown as Record<string, unknown>, "stop");
      const raw = await ollama().generate({ model: "story:1b", prompt: "Once upon a time", raw: true });
      expect([raw.model, raw.response]).toEqual(["story:1b", STORY]);
      let text = "";
      for await (const part of await ollama().generate({
        model: "scripted:latest",
        prompt: "Once upon a time",
        raw: true,
        stream: true,
      }))
        text += part.response;
      expect(text).toBe(STORY);
      const cut = await ollama().generate({
        model: "scripted",
        prompt: "Once upon a time",
        raw: true,
        options: { num_predict: 2, temperature: 0, seed: 7, top_k: 40, top_p: 0.9, repeat_last_n: 64, num_ctx: 4096 },
      });
      expect(cut.eval_count).toBe(2);
      expect(cut.done_reason).toBe("length");
      expect(STORY.startsWith(cut.response ?? "-")).toBe(true);
    });

    it("suffix fills in the middle on a coder model, as the client and Continue's Ollama provider send", async () => {
      const answer = await ollama().generate({ model: CODER, prompt: "def add(a, b):\n    ", suffix: "\n" });
      expect(answer.response).toBe(CODER_MIDDLE);
      expectMetrics(answer as unknown as Record<string, unknown>, "stop");
      // Continue sends `suffix` only when /api/show's template holds `.Suffix` (a loaded model's: what its
      // tokens are is known once it loads, and Continue's model is the one it is using).
      const shown = await ollama().show({ model: CODER });
      expect(shown.template).toContain(".Suffix");
      expect(shown.capabilities).toContain("insert");
      await ollama().generate({ model: "scripted", prompt: "Once", options: { num_predict: 1 } });
      expect((await ollama().show({ model: "scripted" })).capabilities).not.toContain("insert");
      // Continue's body, byte for byte: NDJSON lines whose responses join to the middle.
      const response = await fetch(`${edge().url}/api/generate`, {
        method: "POST",
        headers: AUTH,
        body: readFileSync("test/fixtures/fim/continue-ollama-generate.json", "utf8"),
      });
      expect(response.headers.get("content-type")).toBe("application/x-ndjson");
      const lines = (await response.text())
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.map((l) => l["response"]).join("")).toBe(CODER_MIDDLE);
      expect(lines.at(-1)).toMatchObject({ done: true, done_reason: "stop" });
    });

    it("an empty prompt loads the model, keep_alive 0 unloads it; ps and show follow", async () => {
      const loaded = await post("/api/generate", { model: "scripted", prompt: "", keep_alive: "5m" });
      expect(loaded.json).toMatchObject({ model: "scripted", response: "", done: true, done_reason: "load" });
      const ps = await ollama().ps();
      const entry = ps.models.find((m) => m.name === "scripted:latest");
      expect(entry?.size).toBeGreaterThan(0);
      expect(new Date(entry?.expires_at ?? 0).getTime()).toBeGreaterThan(Date.now());
      // RFC 3339 in UTC, as Ollama writes it and Open WebUI's `datetime.fromisoformat` reads it.
      expect(JSON.stringify(entry?.expires_at)).toMatch(/^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"$/);
      const show = await ollama().show({ model: "thinking:latest" });
      expect(show.capabilities).toEqual(["completion", "tools", "thinking"]);
      const { models } = await clientsFor(sidecar.url).grpc.listModels({});
      expect(show.template).toBe(models.find((m) => m.id === "thinking")?.chatTemplate);
      // The file's header (its trained context, not the loaded one), the tokenizer's long arrays left out.
      expect(show.model_info).toMatchObject({
        "general.architecture": "qwen2",
        "qwen2.context_length": 4096,
        "tokenizer.ggml.tokens": null,
      });
      expect(show.details.family).toBe("qwen2");
      const unloaded = await ollama().chat({ model: "scripted", messages: [], keep_alive: 0 });
      expect(unloaded).toMatchObject({ message: { role: "assistant", content: "" }, done_reason: "unload" });
      expect((await ollama().ps()).models.map((m) => m.name)).not.toContain("scripted:latest");
      // A pull of a catalogued model makes it ready: progress lines, then success, and it is loaded.
      const statuses: string[] = [];
      for await (const part of await ollama().pull({ model: "scripted:latest", stream: true }))
        statuses.push(part.status);
      expect([statuses[0], statuses.at(-1)]).toEqual(["pulling scripted:latest", "success"]);
      expect((await ollama().ps()).models.map((m) => m.name)).toContain("scripted:latest");
      expect(await ollama().pull({ model: "scripted" })).toEqual({ status: "success" });
    });

    it("embed and the older embeddings: the sidecar's own vectors", async () => {
      const texts = ["Once upon a time", "Hello!"];
      const rpc = await clientsFor(sidecar.url).grpc.embed({
        model: "scripted",
        inputs: texts.map((value) => ({ input: { case: "text", value } })),
      });
      const answer = await ollama().embed({ model: "scripted:latest", input: texts });
      expect(answer.embeddings).toHaveLength(2);
      answer.embeddings.forEach((vector, i) => {
        expect(vector).toEqual(rpc.embeddings[i]?.values);
      });
      expect(answer.prompt_eval_count).toBe(rpc.promptTokens);
      const old = await ollama().embeddings({ model: "scripted", prompt: texts[0]! });
      expect(old.embedding).toEqual(rpc.embeddings[0]?.values);
    });

    it("bad bodies and unknown names: Ollama's {error} with its status codes", async () => {
      const chat = { model: "thinking", messages: [{ role: "user", content: "Hi" }] };
      await expect(ollama().chat({ model: "nope:7b", messages: [user("Hi")] })).rejects.toMatchObject({
        status_code: 404,
        error: expect.stringContaining("not found"),
      });
      const cases: [string, unknown, number, RegExp][] = [
        ["/api/chat", { ...chat, messages: [{ role: "user", content: "Hi", images: ["aGk="] }] }, 400, /images/],
        ["/api/generate", { model: "thinking", prompt: "Hi", images: ["aGk="] }, 400, /images/],
        [
          "/api/generate",
          { model: "scripted", prompt: "def f(", suffix: "}" },
          400,
          /'suffix' asks for fill-in-the-mid/,
        ],
        ["/api/chat", { ...chat, options: { mirostat: 2 } }, 400, /options\.mirostat/],
        ["/api/chat", { ...chat, options: { temprature: 0.2 } }, 400, /temprature/],
        ["/api/chat", { ...chat, format: "yaml" }, 400, /format/],
        ["/api/chat", { ...chat, messages: [{ role: "robot", content: "Hi" }] }, 400, /role/],
        ["/api/chat", { messages: chat.messages }, 400, /model/],
        ["/api/show", { model: "nope" }, 404, /not found/],
        ["/api/pull", { model: "x" }, 404, /not found/],
        ["/api/pull", { model: "hf:someone/repo/model.gguf" }, 403, /needs an admin key/],
        ["/api/copy", { source: "a", destination: "b" }, 404, /api\/copy/],
      ];
      for (const [path, body, status, message] of cases) {
        const answer = await post(path, body);
        expect([path, answer.status, answer.type], JSON.stringify(body)).toEqual([path, status, "application/json"]);
        expect(Object.keys(answer.json)).toEqual(["error"]);
        expect(answer.json.error).toMatch(message);
      }
      const anonymous = await post("/api/chat", chat, {});
      expect([anonymous.status, Object.keys(anonymous.json)]).toEqual([401, ["error"]]);
      const tags = await fetch(`${edge().url}/api/tags`);
      expect([tags.status, Object.keys((await tags.json()) as object)]).toEqual([401, ["error"]]);
    });
  },
  { apiKeys: KEY },
);
