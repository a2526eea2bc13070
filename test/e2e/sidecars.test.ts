// Several sidecars behind one Node edge (SIDECAR_URLS): three real sidecars in this process — A
// and C serve the scripted model, B the tools model — and the edge picks among them by model,
// by conversation (rendezvous hashing on the /c1 conversation id), else by load; it fails over
// when one is stopped and sends its conversations back when it returns. Which sidecar served a
// request is read from each sidecar's own count of accepted generations. Last, a fresh edge on
// each runtime (Node, and workerd under `wrangler dev`) in front of A and B routes by model.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeEdge, type RunningEdge } from "../../edge/hosts/node/main.js";
import { createEdgeMetrics, type EdgeMetrics } from "../../edge/hosts/node/metrics.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { modelPath } from "../../gguf/models.js";
import { CHAT_REPLY, THINK_REASONING } from "../support/scripted.js";
import { clientsFor, startTestSidecar } from "../support/sidecar.js";
import { describeOnRuntimes } from "../support/runtimes.js";
import { readEvents } from "../support/sse.js";

type Name = "A" | "B" | "C";
const sidecars = new Map<Name, RunningSidecar>();
let edge: RunningEdge;
let metrics: EdgeMetrics;

const scripted = () => startTestSidecar({ modelId: "scripted" });
beforeAll(async () => {
  sidecars.set("A", await scripted());
  sidecars.set("B", await startTestSidecar({ model: modelPath("tools"), modelId: "tools" }));
  sidecars.set("C", await scripted());
  metrics = createEdgeMetrics();
  const urls = (["A", "B", "C"] as const).map((n) => sidecars.get(n)?.url ?? "");
  edge = await startNodeEdge({ sidecarUrls: urls, port: 0, metrics, routing: { backoffMs: 100, maxBackoffMs: 400 } });
}, 120_000);
afterAll(async () => {
  await edge?.close();
  for (const sidecar of sidecars.values()) await sidecar.stop();
});

function started(): Record<Name, number> {
  const count = (n: Name) => sidecars.get(n)?.metrics.requestsStarted ?? 0;
  return { A: count("A"), B: count("B"), C: count("C") };
}

/** Runs `send` and names the one sidecar whose count of accepted generations went up by one. */
async function servedBy<T>(send: () => Promise<T>): Promise<{ by: Name; result: T }> {
  const before = started();
  const result = await send();
  const after = started();
  const moved = (["A", "B", "C"] as const).filter((n) => after[n] !== before[n]);
  expect(moved).toHaveLength(1);
  const [by] = moved;
  expect(after[by as Name] - before[by as Name]).toBe(1);
  return { by: by as Name, result };
}

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${edge.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

type Completion = { model: string; choices: { message: { content: string; reasoning_content?: string } }[] };

async function chat(model: string, content: string): Promise<Completion> {
  const response = await post("/v1/chat/completions", { model, messages: [{ role: "user", content }], temperature: 0 });
  expect(response.status).toBe(200);
  return (await response.json()) as Completion;
}

/** One /c1 turn; returns the conversation id and the reply's text. */
async function turn(conversationId: string | undefined, content: string): Promise<{ id: string; text: string }> {
  const response = await post("/c1/chat", {
    model: "scripted",
    messages: [{ role: "user", content }],
    ...(conversationId === undefined ? {} : { conversation_id: conversationId }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as Completion;
  return { id: response.headers.get("x-conversation-id") ?? "", text: body.choices[0]?.message.content ?? "" };
}

describe("model routing", () => {
  it("sends each model's requests to the sidecars that serve it", async () => {
    const tools = await servedBy(() => chat("tools", "Hello!"));
    expect(tools.by).toBe("B");
    expect(tools.result.model).toBe("tools");
    expect(tools.result.choices[0]?.message).toMatchObject({ content: CHAT_REPLY, reasoning_content: THINK_REASONING });
    for (let i = 0; i < 4; i++) {
      const plain = await servedBy(() => chat("scripted", `Hello ${i}!`));
      expect(["A", "C"]).toContain(plain.by);
      expect(plain.result.model).toBe("scripted");
      expect(plain.result.choices[0]?.message).toEqual({ role: "assistant", content: CHAT_REPLY, refusal: null });
    }
  });

  it("answers a model no sidecar serves with a 404 in each protocol's shape, sending nothing", async () => {
    const before = started();
    const openai = await post("/v1/chat/completions", { model: "nope", messages: [{ role: "user", content: "Hi" }] });
    expect(openai.status).toBe(404);
    expect(await openai.json()).toEqual({
      error: {
        message: "The model 'nope' does not exist.",
        type: "invalid_request_error",
        param: "model",
        code: "model_not_found",
      },
    });
    const anthropic = await post("/v1/messages", {
      model: "nope",
      max_tokens: 16,
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(anthropic.status).toBe(404);
    expect(await anthropic.json()).toEqual({
      type: "error",
      error: { type: "not_found_error", message: "The model 'nope' does not exist." },
    });
    expect(started()).toEqual(before);
  });

  it("sends /tokenize to the sidecar that serves the named model", async () => {
    const text = "Hello, llama 🦙!";
    for (const [model, name] of [
      ["tools", "B"],
      ["scripted", "A"],
    ] as const) {
      const rpc = await clientsFor(sidecars.get(name)?.url ?? "").grpc.tokenize({
        input: { case: "text", value: text },
      });
      const response = await post("/tokenize", { model, content: text, add_special: true });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ tokens: rpc.tokens });
    }
    const scriptedCount = (
      await clientsFor(sidecars.get("A")?.url ?? "").grpc.tokenize({ input: { case: "text", value: text } })
    ).tokens.length;
    const toolsCount = (
      await clientsFor(sidecars.get("B")?.url ?? "").grpc.tokenize({ input: { case: "text", value: text } })
    ).tokens.length;
    expect(scriptedCount).not.toBe(toolsCount); // the two tokenizers differ, so the answer names its sidecar
  });

  it("lists the union of the models, and reports each sidecar by id without its address", async () => {
    const models = (await (await fetch(`${edge.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(["scripted", "tools"]);
    const health = await fetch(`${edge.url}/health`);
    expect(health.status).toBe(200);
    const body = (await health.json()) as {
      status: string;
      sidecar: string;
      models: string[];
      sidecars: { id: string; status: string; models: string[] }[];
    };
    expect(body).toMatchObject({ status: "ok", sidecar: "ok", models: ["scripted", "tools"] });
    expect(body.sidecars.map((s) => [s.status, s.models])).toEqual([
      ["ok", ["scripted"]],
      ["ok", ["tools"]],
      ["ok", ["scripted"]],
    ]);
    for (const s of body.sidecars) expect(s.id).toMatch(/^[0-9a-f]{12}$/);
    const info = await (await fetch(`${edge.url}/v1/info`)).text();
    for (const sidecar of sidecars.values()) expect(info).not.toContain(String(sidecar.port));
    const parsed = JSON.parse(info) as {
      models: { id: string }[];
      sidecars: { id: string; requests: { ok: number } }[];
    };
    expect(parsed.models.map((m) => m.id)).toEqual(["scripted", "tools"]);
    expect(parsed.sidecars.map((s) => s.id)).toEqual(body.sidecars.map((s) => s.id));
  });
});

describe("affinity and load", () => {
  it("keeps every turn of a /c1 conversation on one sidecar", async () => {
    const landed = new Set<Name>();
    for (let c = 0; c < 4; c++) {
      const first = await servedBy(() => turn(undefined, `Hello from conversation ${c}!`));
      expect(first.result.text).toBe(CHAT_REPLY);
      for (let t = 2; t <= 3; t++) {
        const next = await servedBy(() => turn(first.result.id, `Turn ${t}.`));
        expect(next.result.text).toBe(CHAT_REPLY);
        expect(next.by).toBe(first.by);
      }
      landed.add(first.by);
    }
    for (const name of landed) expect(["A", "C"]).toContain(name);
  });

  it("spreads requests without affinity over the least loaded sidecars", async () => {
    const before = started();
    const replies = await Promise.all([0, 1, 2, 3].map((i) => chat("scripted", `Hi ${i}`)));
    for (const reply of replies) expect(reply.choices[0]?.message.content).toBe(CHAT_REPLY);
    const after = started();
    expect(after.A - before.A + (after.C - before.C)).toBe(4);
    expect(after.A - before.A).toBeGreaterThanOrEqual(1);
    expect(after.C - before.C).toBeGreaterThanOrEqual(1);
    expect(after.B).toBe(before.B);
  });

  it("counts the generations sent to each sidecar in the Node edge's metrics", async () => {
    const text = await (await fetch(`${edge.url}/metrics`)).text();
    const ok = [...text.matchAll(/^edge_sidecar_requests_total\{sidecar="([0-9a-f]{12})",outcome="ok"\} (\d+)$/gm)];
    const total = ok.reduce((sum, m) => sum + Number(m[2]), 0);
    const counts = started();
    expect(total).toBe(counts.A + counts.B + counts.C);
  });
});

describe("resumable streams across sidecars", () => {
  it(
    "names the sidecar that holds a stream in its id, and every resume, poll and embedding reaches the right " + "one",
    async () => {
      const info = (await (await fetch(`${edge.url}/v1/info`)).json()) as {
        sidecars: { id: string; models: string[] }[];
      };
      const toolsId = info.sidecars.find((s) => s.models.includes("tools"))?.id;
      expect(toolsId).toMatch(/^[0-9a-f]{12}$/);
      const { by, result: response } = await servedBy(() =>
        post(
          "/v1/chat/completions",
          { model: "tools", stream: true, messages: [{ role: "user", content: "Hi" }] },
          { "x-resumable": "true" },
        ),
      );
      expect(by).toBe("B");
      const streamId = response.headers.get("x-stream-id") ?? "";
      expect(streamId.endsWith(`.${toolsId}`)).toBe(true);
      const original = await response.text();
      // Read again twice: the other sidecars do not hold it, and are never asked.
      const again = await (await fetch(`${edge.url}/v1/streams/${streamId}`)).text();
      expect(again).toBe(original);
      const rest = await (
        await fetch(`${edge.url}/v1/streams/${streamId}`, { headers: { "last-event-id": "2" } })
      ).text();
      expect(original.endsWith(rest)).toBe(true);
      const elsewhere = streamId.replace(/\.[0-9a-f]+$/, `.${info.sidecars.find((s) => s.id !== toolsId)?.id ?? ""}`);
      expect((await fetch(`${edge.url}/v1/streams/${elsewhere}`)).status).toBe(404);
      const embedded = (await (await post("/v1/embeddings", { model: "tools", input: "Hi" })).json()) as {
        data: unknown[];
      };
      expect(embedded.data).toHaveLength(1);
    },
  );
});

describe("failover and recovery", () => {
  it("fails over from a stopped sidecar before the first token, and takes it back once it is healthy", async () => {
    // A conversation that lives on A.
    let onA: string | undefined;
    for (let i = 0; i < 24 && onA === undefined; i++) {
      const first = await servedBy(() => turn(undefined, `Looking for A, try ${i}.`));
      if (first.by === "A") onA = first.result.id;
    }
    expect(onA).toBeDefined();
    const a = sidecars.get("A");
    await a?.stop();

    // Its next turn, and a stream, are answered by C with the exact reply.
    const moved = await servedBy(() => turn(onA, "Are you still there?"));
    expect(moved).toEqual({ by: "C", result: { id: onA, text: CHAT_REPLY } });
    const stream = await servedBy(async () => {
      const response = await post("/v1/chat/completions", {
        model: "scripted",
        stream: true,
        messages: [{ role: "user", content: "Stream please." }],
      });
      return (await readEvents(response.body)).map((e) => e.data);
    });
    expect(stream.by).toBe("C");
    const text = stream.result
      .filter((d) => d !== "[DONE]")
      .map((d) => (JSON.parse(d) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? "")
      .join("");
    expect(text).toBe(CHAT_REPLY);
    const health = (await (await fetch(`${edge.url}/health`)).json()) as {
      sidecar: string;
      sidecars: { status: string }[];
    };
    expect(health.sidecar).toBe("degraded");
    expect(health.sidecars.map((s) => s.status)).toEqual(["down", "ok", "ok"]);

    // A comes back on its port; once its health check passes, the conversation returns to it.
    const back = await startTestSidecar({ modelId: "scripted", port: a?.port ?? 0 });
    sidecars.set("A", back);
    await expect
      .poll(async () => ((await (await fetch(`${edge.url}/health`)).json()) as { sidecar: string }).sidecar, {
        timeout: 10_000,
        interval: 100,
      })
      .toBe("ok");
    const returned = await servedBy(() => turn(onA, "And now?"));
    expect(returned).toEqual({ by: "A", result: { id: onA, text: CHAT_REPLY } });
  });
});

// Last, as the counts above are the one Node edge's: a fresh edge on each runtime in front of A
// (scripted) and B (tools) learns what each serves from their own reports.
describeOnRuntimes(
  "two sidecars behind a fresh edge",
  () => [sidecars.get("A")?.url ?? "", sidecars.get("B")?.url ?? ""],
  (edgeOn) => {
    async function chatOn(model: string): Promise<{ model: string; choices: { message: Record<string, unknown> }[] }> {
      const response = await fetch(`${edgeOn().url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "Hello!" }] }),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as { model: string; choices: { message: Record<string, unknown> }[] };
    }

    it("routes each model to the sidecar that serves it", async () => {
      const before = started();
      const [a, b, c] = [await chatOn("tools"), await chatOn("scripted"), await chatOn("tools")];
      expect([a.model, b.model, c.model]).toEqual(["tools", "scripted", "tools"]);
      expect(a.choices[0]?.message).toEqual({
        role: "assistant",
        content: CHAT_REPLY,
        reasoning_content: THINK_REASONING,
        refusal: null,
      });
      expect(b.choices[0]?.message).toEqual({ role: "assistant", content: CHAT_REPLY, refusal: null });
      const after = started();
      expect([after.A - before.A, after.B - before.B]).toEqual([1, 2]);
    });

    it("lists the union of the models and reports both sidecars", async () => {
      const models = (await (await fetch(`${edgeOn().url}/v1/models`)).json()) as { data: { id: string }[] };
      expect(models.data.map((m) => m.id)).toEqual(["scripted", "tools"]);
      const health = (await (await fetch(`${edgeOn().url}/health`)).json()) as {
        sidecar: string;
        sidecars: { status: string; models: string[] }[];
      };
      expect(health.sidecar).toBe("ok");
      expect(health.sidecars.map((s) => [s.status, s.models])).toEqual([
        ["ok", ["scripted"]],
        ["ok", ["tools"]],
      ]);
    });
  },
);
