// The registry of resumable generations alone, on scripted event sources: retention after the
// finish, the memory cap (finished streams dropped oldest first, live ones kept), readers that
// follow the live end.
import { describe, expect, it, vi } from "vitest";
import type { GenerateEvent } from "../../sidecar/engine/decode/generate.js";
import { eventBytes, ResumableStreams } from "../../sidecar/engine/streams/resumable-streams.js";

const start: GenerateEvent = { event: { case: "start", value: { model: "m" } } };
const token = (text: string): GenerateEvent => ({ event: { case: "token", value: { text } } });
const finish: GenerateEvent = { event: { case: "finish", value: {} } };

async function* source(events: GenerateEvent[], gate?: Promise<void>): AsyncGenerator<GenerateEvent> {
  for (const e of events) {
    if (gate !== undefined && e === finish) await gate;
    yield e;
  }
}

async function readAll(streams: ResumableStreams, id: string, after = 0): Promise<GenerateEvent[]> {
  const reader = streams.read(id, "", after, new AbortController().signal);
  if (reader === undefined) throw new Error(`no stream ${id}`);
  const out: GenerateEvent[] = [];
  for await (const e of reader) out.push(e);
  return out;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("ResumableStreams", () => {
  it("keeps a finished stream for the retention period, then forgets it", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const streams = new ResumableStreams({ graceMs: 1000, retentionMs: 5000, maxBytes: 1 << 20 });
      streams.add("a", "", start, source([token("x"), finish]), new AbortController(), 0);
      expect(await readAll(streams, "a")).toEqual([start, token("x"), finish]);
      vi.advanceTimersByTime(4999);
      expect(streams.read("a", "", 0, new AbortController().signal)).toBeDefined();
      vi.advanceTimersByTime(1);
      expect(streams.read("a", "", 0, new AbortController().signal)).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it("over the memory cap drops finished streams oldest first and never a live one", async () => {
    const one = eventBytes(start) + eventBytes(token("x")) + eventBytes(finish);
    const streams = new ResumableStreams({ graceMs: 1000, retentionMs: 60_000, maxBytes: 2 * one });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    streams.add("live", "", start, source([token("x"), finish], gate), new AbortController(), 0);
    streams.add("old", "", start, source([token("x"), finish]), new AbortController(), 0);
    await settle();
    streams.add("new", "", start, source([token("x"), finish]), new AbortController(), 0);
    await settle();
    expect(
      ["live", "old", "new"].map((id) => streams.read(id, "", 0, new AbortController().signal) !== undefined),
    ).toEqual([true, false, true]);
    open();
    expect(await readAll(streams, "live")).toEqual([start, token("x"), finish]);
  });

  it("a reader from the middle gets the rest and then the live events as they come", async () => {
    const streams = new ResumableStreams();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    streams.add("s", "", start, source([token("a"), token("b"), finish], gate), new AbortController(), 0);
    await settle();
    const reading = readAll(streams, "s", 2);
    open();
    expect(await reading).toEqual([token("b"), finish]);
  });
});
