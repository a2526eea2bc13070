// One log line per request, exactly: who (key id, never the key), what, how it ended, with
// tokens and time to first token; a stream's line once the stream ends; no prompt or reply text
// unless asked for.
import { describe, expect, it } from "vitest";
import type { RequestLogLine } from "../../edge/core/request-log.js";
import { delay, finish, start, token } from "../support/fake-sidecar.js";
import { post, testApp } from "../support/app.js";

const SECRET = "sk-log-secret-1";
const PROMPT = "my private prompt";

function logged(options: { logBodies?: boolean } = {}) {
  const lines: RequestLogLine[] = [];
  const script = [
    start("fake-model", 7, 3),
    delay(5),
    token("Hi"),
    token(" there"),
    finish("stop", { promptTokens: 7, completionTokens: 2 }),
  ];
  const app = testApp(script, {
    access: { apiKeys: SECRET, allowOpen: true },
    log: (line) => lines.push(line),
    ...options,
  });
  return { ...app, lines };
}

const auth = { headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" } };

describe("request log", () => {
  it("writes one line for a JSON answer, with the key's id and no text", async () => {
    const { app, lines } = logged();
    const response = await post(app, "/v1/chat/completions", { messages: [{ role: "user", content: PROMPT }] }, auth);
    expect(response.status).toBe(200);
    await response.text();
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({
      request_id: expect.stringMatching(/^req_/),
      key_id: expect.stringMatching(/^key_[0-9a-f]{12}$/),
      method: "POST",
      endpoint: "/v1/chat/completions",
      status: 200,
      outcome: "completed",
      model: "fake-model",
      prompt_tokens: 7,
      cached_tokens: 3,
      completion_tokens: 2,
    });
    expect(response.headers.get("x-request-id")).toBe(line?.request_id);
    expect(JSON.stringify(lines)).not.toContain(SECRET);
    expect(JSON.stringify(lines)).not.toContain(PROMPT);
    expect(JSON.stringify(lines)).not.toContain("Hi there");
  });

  it("writes a stream's line when the stream ends, with its time to first token", async () => {
    const { app, lines } = logged();
    const response = await post(
      app,
      "/v1/chat/completions",
      { messages: [{ role: "user", content: PROMPT }], stream: true },
      auth,
    );
    expect(lines).toHaveLength(0);
    await response.text();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ status: 200, outcome: "completed", completion_tokens: 2 });
    expect(lines[0]?.ttft_ms).toBeGreaterThanOrEqual(0);
  });

  it("logs refusals with their status and kind", async () => {
    const { app, lines } = logged();
    await (
      await post(
        app,
        "/v1/messages",
        { model: "m", max_tokens: 5, messages: [] },
        { headers: { "x-api-key": "sk-wrong" } },
      )
    ).text();
    await (await post(app, "/v1/chat/completions", { messages: "nope" }, auth)).text();
    expect(lines.map((l) => [l.status, l.outcome, l.error_type, l.key_id])).toEqual([
      [401, "error", "authentication", "anonymous"],
      [400, "error", "invalid_request", lines[1]?.key_id],
    ]);
    expect(JSON.stringify(lines)).not.toContain("sk-wrong");
  });

  it("adds prompt and reply text only when LOG_BODIES asks", async () => {
    const { app, lines } = logged({ logBodies: true });
    await (
      await post(app, "/v1/chat/completions", { messages: [{ role: "user", content: PROMPT }], stream: true }, auth)
    ).text();
    expect(lines[0]?.request_body).toContain(PROMPT);
    expect(lines[0]?.reply_text).toBe("Hi there");
  });
});
