// Several sidecars behind the Worker edge (`wrangler dev`, workerd): SIDECAR_URLS names two real
// sidecars, one serving the scripted model and one the tools model. A fresh isolate learns what
// each serves from their own reports and routes every request to the one that serves its model.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/server.js";
import { CHAT_REPLY, THINK_REASONING } from "../support/scripted.js";
import { startTestSidecar } from "../support/sidecar.js";
import { startWrangler, type Wrangler } from "../support/wrangler.js";

let scripted: RunningSidecar;
let tools: RunningSidecar;
let wrangler: Wrangler;
beforeAll(async () => {
  scripted = await startTestSidecar({ modelId: "scripted" });
  tools = await startTestSidecar({ model: modelPath("tools"), modelId: "tools" });
  wrangler = await startWrangler({ SIDECAR_URLS: `${scripted.url},${tools.url}` });
}, 120_000);
afterAll(async () => {
  await wrangler?.stop();
  await scripted?.stop();
  await tools?.stop();
});

async function chat(model: string): Promise<{ model: string; choices: { message: Record<string, unknown> }[] }> {
  const response = await fetch(`${wrangler.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "Hello!" }] }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { model: string; choices: { message: Record<string, unknown> }[] };
}

describe("several sidecars under workerd", () => {
  it("routes each model to the sidecar that serves it", async () => {
    const before = [scripted.metrics.requestsStarted, tools.metrics.requestsStarted];
    const [a, b, c] = [await chat("tools"), await chat("scripted"), await chat("tools")];
    expect([a.model, b.model, c.model]).toEqual(["tools", "scripted", "tools"]);
    expect(a.choices[0]?.message).toEqual({ role: "assistant", content: CHAT_REPLY, reasoning_content: THINK_REASONING, refusal: null });
    expect(b.choices[0]?.message).toEqual({ role: "assistant", content: CHAT_REPLY, refusal: null });
    expect([scripted.metrics.requestsStarted - (before[0] ?? 0), tools.metrics.requestsStarted - (before[1] ?? 0)]).toEqual([1, 2]);
  });

  it("lists the union of the models and reports both sidecars", async () => {
    const models = (await (await fetch(`${wrangler.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(["scripted", "tools"]);
    const health = (await (await fetch(`${wrangler.url}/health`)).json()) as { sidecar: string; sidecars: { status: string; models: string[] }[] };
    expect(health.sidecar).toBe("ok");
    expect(health.sidecars.map((s) => [s.status, s.models])).toEqual([["ok", ["scripted"]], ["ok", ["tools"]]]);
  });
});
