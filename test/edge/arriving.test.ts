// Requests arriving together (edge/core/arriving.ts): each generation tells its sidecar how many
// others this app holds right behind it (GenerateRequest.arriving_with), so that the sidecar's idle
// context evaluates their prompts in one batch; a request refused before its call counts no more.
import { describe, expect, it } from "vitest";
import { Arriving } from "../../edge/core/arriving.js";
import { post, testApp } from "../support/app.js";

const CHAT = { model: "m", messages: [{ role: "user", content: "hi" }] };

describe("arriving_with", () => {
  it("three requests sent at once: the first says two are behind it, the next one, the last none", async () => {
    const { app, sidecar } = testApp();
    const answers = await Promise.all([
      post(app, "/v1/chat/completions", CHAT),
      post(app, "/v1/completions", { model: "m", prompt: "hi" }),
      post(app, "/v1/messages", { ...CHAT, max_tokens: 4 }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(sidecar.calls.map((c) => c.request.arrivingWith)).toEqual([2, 1, 0]);
  });

  it("a lone request says none; one refused before its call is no longer counted", async () => {
    const { app, sidecar } = testApp();
    const [refused, sent] = await Promise.all([post(app, "/v1/chat/completions", { ...CHAT, temperature: "hot" }), post(app, "/v1/chat/completions", CHAT)]);
    expect([refused.status, sent.status]).toEqual([400, 200]);
    expect((await post(app, "/v1/chat/completions", CHAT)).status).toBe(200);
    expect(sidecar.calls.map((c) => c.request.arrivingWith)).toEqual([0, 0]);
  });
});

describe("Arriving", () => {
  it("counts a ticket once, whether it is sent or leaves", () => {
    const arriving = new Arriving();
    const [a, b, c] = [arriving.enter(), arriving.enter(), arriving.enter()];
    b.leave();
    b.leave();
    expect(a.sent()).toBe(1);
    expect(a.sent()).toBe(0);
    a.leave();
    expect(c.sent()).toBe(0);
  });
});
