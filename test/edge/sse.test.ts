// SSE framing (edge/sse/) and the test parser (test/support/sse.ts).
import { describe, expect, it } from "vitest";
import { formatComment, formatEvent, formatJsonEvent } from "../../edge/sse/frame.js";
import { sseResponse } from "../../edge/sse/stream-response.js";
import { post, testApp } from "../support/app.js";
import { checkChatStream } from "../support/contract.js";
import { delay, finish, start, token } from "../support/fake-sidecar.js";
import { hostileSplits, parseChunks, parseText, streamOf, readEvents } from "../support/sse.js";

describe("formatEvent", () => {
  it("writes data, event and id lines and the dispatching blank line", () => {
    expect(formatEvent({ data: "[DONE]" })).toBe("data: [DONE]\n\n");
    expect(formatEvent({ event: "error", data: "{}" })).toBe("event: error\ndata: {}\n\n");
    expect(formatEvent({ event: "x", id: "7", data: "a" })).toBe("event: x\nid: 7\ndata: a\n\n");
  });

  it("splits multi-line data over several data lines (any line end)", () => {
    expect(formatEvent({ data: "a\nb\r\nc\rd" })).toBe("data: a\ndata: b\ndata: c\ndata: d\n\n");
    expect(parseText(formatEvent({ data: "a\nb\r\nc" }))).toEqual([{ event: "message", data: "a\nb\nc", id: "" }]);
  });

  it("refuses line breaks in event names and ids", () => {
    expect(() => formatEvent({ event: "a\nb", data: "" })).toThrow();
    expect(() => formatEvent({ id: "1\r", data: "" })).toThrow();
  });

  it("JSON events stay on one line whatever the text holds", () => {
    const frame = formatJsonEvent({ content: "line 1\nline 2\r\n\u2028🦙" });
    expect(frame.split("\n").filter(Boolean)).toHaveLength(1);
    expect(JSON.parse(parseText(frame)[0]?.data ?? "")).toEqual({ content: "line 1\nline 2\r\n\u2028🦙" });
  });

  it("comments", () => {
    expect(formatComment("ping")).toBe(": ping\n");
    const parsed = parseChunks([new TextEncoder().encode(`${formatComment("ping")}data: x\n\n`)]);
    expect(parsed.comments).toEqual(["ping"]);
    expect(parsed.events).toHaveLength(1);
  });
});

describe("the test SSE parser", () => {
  const text =
    "\uFEFF: hello\r\nevent: a\r\nid: 1\r\ndata: x\r\ndata:y\r\n\r\ndata: 🦙\r\rdata\n\nevent: b\ndata: z\n\n";
  const expected = [
    { event: "a", data: "x\ny", id: "1" },
    { event: "message", data: "🦙", id: "1" },
    { event: "message", data: "", id: "1" },
    { event: "b", data: "z", id: "1" },
  ];

  it("handles BOM, CRLF, CR, comments, multi-line data, empty data", () => {
    expect(parseText(text)).toEqual(expected);
  });

  it("gives the same events at every hostile split", () => {
    const bytes = new TextEncoder().encode(text);
    for (const [how, chunks] of hostileSplits(bytes)) expect(parseChunks(chunks).events, how).toEqual(expected);
  });

  it("drops an unterminated last event", () => {
    expect(parseText("data: a\n\ndata: b")).toEqual([{ event: "message", data: "a", id: "" }]);
  });
});

describe("sseResponse", () => {
  it("streams frames as UTF-8 with SSE headers", async () => {
    async function* frames() {
      yield "data: 1\n\n";
      yield "";
      yield "data: 🦙\n\n";
    }
    const response = sseResponse(frames());
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    expect(await readEvents(response.body)).toEqual([
      { event: "message", data: "1", id: "" },
      { event: "message", data: "🦙", id: "" },
    ]);
  });

  it("pulls the next frame only when the reader asks", async () => {
    let produced = 0;
    async function* frames() {
      for (;;) {
        produced++;
        yield `data: ${produced}\n\n`;
      }
    }
    const response = sseResponse(frames());
    await new Promise((r) => setTimeout(r, 20));
    expect(produced).toBe(0);
    const reader = response.body!.getReader();
    await reader.read();
    await reader.read();
    await new Promise((r) => setTimeout(r, 20));
    expect(produced).toBe(2);
    await reader.cancel();
  });

  it("cancel calls onCancel and ends the frame source", async () => {
    let cancelled: unknown;
    let finished = false;
    async function* frames() {
      try {
        for (;;) yield "data: x\n\n";
      } finally {
        finished = true;
      }
    }
    const response = sseResponse(frames(), { onCancel: (reason) => (cancelled = reason) });
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel("bye");
    await new Promise((r) => setTimeout(r, 0));
    expect(cancelled).toBe("bye");
    expect(finished).toBe(true);
  });

  it("a reader over hostile chunks (streamOf) sees whole events", async () => {
    const bytes = new TextEncoder().encode('data: {"a":"🦙"}\n\ndata: [DONE]\n\n');
    for (const [how, chunks] of hostileSplits(bytes)) {
      expect(await readEvents(streamOf(chunks)), how).toEqual([
        { event: "message", data: '{"a":"🦙"}', id: "" },
        { event: "message", data: "[DONE]", id: "" },
      ]);
    }
  });
});

describe("keep-alive", () => {
  it("writes `: ping` during a silence, one per read, then the frame", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    async function* frames() {
      yield "data: first\n\n";
      await gate;
      yield "data: second\n\n";
    }
    const response = sseResponse(frames(), { keepAliveMs: 20 });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const read = async () => decoder.decode((await reader.read()).value);
    expect(await read()).toBe("data: first\n\n");
    expect(await read()).toBe(": ping\n");
    expect(await read()).toBe(": ping\n");
    // no read pending: nothing is written, no pings pile up
    await new Promise((r) => setTimeout(r, 100));
    release();
    expect(await read()).toBe("data: second\n\n");
    expect((await reader.read()).done).toBe(true);
  });

  it("pings inside a chat stream are comments every reader ignores", async () => {
    const { app } = testApp([start(), token("Hi"), delay(120), token(" there"), finish()], { keepAliveMs: 25 });
    const response = await post(app, "/v1/chat/completions", {
      messages: [{ role: "user", content: "x" }],
      stream: true,
    });
    const bytes = new Uint8Array(await response.arrayBuffer());
    const parsed = parseChunks([bytes]);
    expect(parsed.comments.length).toBeGreaterThanOrEqual(2);
    expect(checkChatStream(parsed.events).text).toBe("Hi there");
  });
});
