// The playground page (public/) in a real browser: the Chromium that npm ci brings
// (@sparticuz/chromium, see test/support/browser.ts) driven by playwright-core,
// against the edge on Node with a real sidecar. The `tools` model answers with reasoning then an
// answer, or a get_weather call when tools are offered; the 60M random model writes long enough
// for the Stop button to cancel it. One run under `wrangler dev` loads the page from the Worker's
// static assets. UPDATE_SCREENSHOT=1 writes docs/playground.png.
import { spawnSync } from "node:child_process";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureModels, modelPath } from "../../gguf/models.js";
import { launchBrowser } from "../support/browser.js";
import { startStack, type Stack } from "../support/edge.js";
import { THINK_REASONING, TOOLS_ANSWER } from "../support/scripted.js";
import { readMetrics } from "../support/sidecar.js";
import { startWrangler, type Wrangler } from "../support/wrangler.js";

const WEATHER_TOOLS = JSON.stringify([
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Weather for a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
]);
const PROTOCOLS = ["chat", "responses", "messages"] as const;

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function openPage(url: string, model: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  await page.goto(url);
  await page.locator(`#model option[value="${model}"]`).waitFor({ state: "attached" });
  await page.selectOption("#model", model);
  return page;
}

/** Sends a message and waits until the reply has its stats line (finished or stopped). */
async function ask(page: Page, text: string): Promise<void> {
  const replies = await page.locator(".turn.assistant").count();
  await page.fill("#prompt", text);
  await page.click("#send");
  await page.locator(".turn.assistant .stats").nth(replies).filter({ hasText: /\S/ }).waitFor();
}

const STATS = /^TTFT \d+ ms · [\d.]+ tok\/s · in (\d+) \(cached (\d+)\) · out (\d+)$/;

describe("the playground on Node, tools model", () => {
  let stack: Stack;
  let page: Page;
  beforeAll(async () => {
    stack = await startStack({ model: modelPath("tools"), contextSize: 2048 });
    page = await openPage(stack.edge.url, "tools");
  });
  afterAll(async () => {
    await page?.close();
    await stack?.stop();
  });

  it("serves the page itself with its content types and policy, without a key", async () => {
    const html = await fetch(`${stack.edge.url}/`);
    expect(html.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(html.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect((await fetch(`${stack.edge.url}/app.js`)).headers.get("content-type")).toBe(
      "text/javascript; charset=utf-8",
    );
    expect((await fetch(`${stack.edge.url}/style.css`)).headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect((await fetch(`${stack.edge.url}/%2e%2e/package.json`)).status).toBe(404);
    expect((await fetch(`${stack.edge.url}/_headers`)).status).toBe(404);
  });

  it.each(PROTOCOLS)("%s: streams the answer with the reasoning apart, and the reply's stats", async (protocol) => {
    await page.click("#clear");
    await page.selectOption("#protocol", protocol);
    await page.fill("#tools", "");
    await ask(page, "How is the weather?");
    const reply = page.locator(".turn.assistant").last();
    expect(await reply.locator(".reasoning").textContent()).toBe(THINK_REASONING);
    expect(await reply.locator(".answer").textContent()).toBe(TOOLS_ANSWER);
    const stats = STATS.exec((await reply.locator(".stats").textContent()) ?? "");
    expect(stats).not.toBeNull();
    // The same request without a stream reports the same usage.
    const direct = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "tools", messages: [{ role: "user", content: "How is the weather?" }] }),
    });
    const usage = ((await direct.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    expect(Number(stats?.[1])).toBe(usage.prompt_tokens);
    expect(Number(stats?.[3])).toBe(usage.completion_tokens);
  });

  it("shows what could not be sent as an error, and leaves that message out of the conversation", async () => {
    await page.click("#clear");
    await page.selectOption("#protocol", "messages");
    await page.fill("#tools", "[{");
    await page.fill("#prompt", "First try");
    await page.click("#send");
    await expect.poll(() => page.locator(".turn.error").allTextContents()).toEqual([expect.stringMatching(/JSON/)]);
    await page.fill("#tools", "");
    await page.fill("#temperature", "1.5"); // Messages allows 0–1: the edge's own 400
    await page.fill("#prompt", "Second try");
    await page.click("#send");
    await expect.poll(() => page.locator(".turn.error").count()).toBe(2);
    expect(await page.locator(".turn.error").last().textContent()).toMatch(/temperature/);
    await page.fill("#temperature", "");
    await ask(page, "How is the weather?");
    const reply = page.locator(".turn.assistant").last();
    expect(await reply.locator(".answer").textContent()).toBe(TOOLS_ANSWER);
    // Only the last message was sent: the prompt is what one turn alone counts.
    const count = await fetch(`${stack.baseURL}/messages/count_tokens`, {
      method: "POST",
      body: JSON.stringify({ model: "tools", messages: [{ role: "user", content: "How is the weather?" }] }),
    });
    const { input_tokens } = (await count.json()) as { input_tokens: number };
    expect(Number(STATS.exec((await reply.locator(".stats").textContent()) ?? "")?.[1])).toBe(input_tokens);
  });

  it("type-checks its script (app.js is checked by tsc, as it is served)", () => {
    const run = spawnSync("node_modules/.bin/tsc", ["-p", "public/tsconfig.json"], { encoding: "utf8" });
    expect(run.stdout + run.stderr).toBe("");
    expect(run.status).toBe(0);
  });

  it.each(PROTOCOLS)("%s: shows the tool call as it streams", async (protocol) => {
    await page.click("#clear");
    await page.selectOption("#protocol", protocol);
    await page.fill("#tools", WEATHER_TOOLS);
    await ask(page, "Weather in Tokyo?");
    const reply = page.locator(".turn.assistant").last();
    expect(await reply.locator(".tool").allTextContents()).toEqual(['call get_weather({"city":"Tokyo"})']);
    expect(await reply.locator(".answer").textContent()).toBe("");
  });

  it("shades each token by its probability, with the alternatives on hover", async () => {
    await page.click("#clear");
    await page.selectOption("#protocol", "chat");
    await page.fill("#tools", "");
    await page.check("#logprobs");
    await ask(page, "How is the weather?");
    if (process.env["UPDATE_SCREENSHOT"] === "1") await page.screenshot({ path: "docs/playground.png" });
    await page.uncheck("#logprobs");
    const tokens = page.locator(".turn.assistant").last().locator(".answer .tok");
    expect((await tokens.allTextContents()).join("")).toBe(TOOLS_ANSWER);
    const title = (await tokens.first().getAttribute("title")) ?? "";
    expect(title).toMatch(/^"It" \d+\.\d%(\n {2}".*" \d+\.\d%)*$/);
    expect(await tokens.first().evaluate((el) => (el as HTMLElement).style.background)).toMatch(/^rgba\(255, 140, 0, /);
    // ° is two byte tokens: one piece of text, both tokens on hover.
    const degree = (await tokens.filter({ hasText: /^°$/ }).getAttribute("title")) ?? "";
    expect(degree.split("\n").filter((line) => !line.startsWith("  "))).toEqual([
      expect.stringMatching(/^"bytes:\\\\xc2" /),
      expect.stringMatching(/^"bytes:\\\\xb0" /),
    ]);
  });

  it("with keys set: the page loads without one, the API refuses it until the key is typed in", async () => {
    const keyed = await startStack(
      { model: modelPath("tools"), contextSize: 2048 },
      { access: { apiKeys: "right-key" } },
    );
    const keyedPage = await browser.newPage();
    try {
      await keyedPage.goto(keyed.edge.url);
      await expect.poll(() => keyedPage.locator(".turn.error").textContent()).toMatch(/^Could not list models: /);
      await keyedPage.fill("#key", "right-key");
      await keyedPage.dispatchEvent("#key", "change");
      await expect.poll(() => keyedPage.locator("#model option").allTextContents()).toContain("tools");
      await ask(keyedPage, "How is the weather?");
      expect(await keyedPage.locator(".turn.assistant .answer").last().textContent()).toBe(TOOLS_ANSWER);
    } finally {
      await keyedPage.close();
      await keyed.stop();
    }
  });
});

describe("the playground's Stop button", () => {
  let stack: Stack;
  beforeAll(async () => {
    const { "random-60m": model } = await ensureModels("models", ["random-60m"]);
    stack = await startStack({ model, sequences: 1, contextSize: 4096 });
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it("cancels the generation: the sidecar frees its sequence", async () => {
    const page = await openPage(stack.edge.url, "random-60m");
    const active = async () => (await readMetrics(stack.sidecar.url))["sidecar_generations_active"] ?? -1;
    try {
      const aborted = stack.sidecar.metrics.generationsAborted;
      await page.fill("#max_tokens", "4000");
      await page.fill("#prompt", "Tell me everything.");
      await page.click("#send");
      await expect.poll(active, { timeout: 10_000 }).toBe(1);
      await expect.poll(() => page.locator(".answer").textContent(), { timeout: 10_000 }).toMatch(/\S/);
      await page.click("#stop");
      // Freed within about a second: the whole reply would take a minute or more.
      await expect.poll(active, { timeout: 2_000 }).toBe(0);
      expect(stack.sidecar.metrics.generationsAborted - aborted).toBe(1);
      expect(await page.locator(".stats").textContent()).toMatch(/^TTFT \d+ ms · .*stopped$/);
      expect(await page.isEnabled("#send")).toBe(true);
      expect(await page.isDisabled("#stop")).toBe(true);
    } finally {
      await page.close();
    }
  });
});

describe("the playground from the Worker's static assets (wrangler dev)", () => {
  let stack: Stack;
  let wrangler: Wrangler;
  beforeAll(async () => {
    stack = await startStack({ model: modelPath("tools"), contextSize: 2048 });
    wrangler = await startWrangler({ SIDECAR_URL: stack.sidecar.url });
  }, 90_000);
  afterAll(async () => {
    await wrangler?.stop();
    await stack?.stop();
  });

  it("loads / and streams a reply with its reasoning apart", async () => {
    const page = await openPage(wrangler.url, "tools");
    try {
      await ask(page, "How is the weather?");
      const reply = page.locator(".turn.assistant").last();
      expect(await reply.locator(".reasoning").textContent()).toBe(THINK_REASONING);
      expect(await reply.locator(".answer").textContent()).toBe(TOOLS_ANSWER);
      // The API still reaches the Worker; only the page's own files are assets.
      expect((await fetch(`${wrangler.url}/health`)).status).toBe(200);
      expect((await fetch(`${wrangler.url}/v1/models`)).status).toBe(200);
      const html = await fetch(`${wrangler.url}/`);
      expect(html.headers.get("content-type")).toMatch(/^text\/html/);
      expect(html.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect((await fetch(`${wrangler.url}/README.md`)).status).toBe(404);
    } finally {
      await page.close();
    }
  });
});
