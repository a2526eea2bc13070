// Lets a generation run ahead of its transport by a bounded number of events (`readAhead`), so
// writing a token overlaps the next decode step.
/** Events a generation may run ahead of a slow reader before it waits for it. */
const READ_AHEAD_LIMIT = 256;

export interface ReadAheadOptions<T> {
  /** Items that may wait for the reader (default READ_AHEAD_LIMIT). */
  readonly limit?: number;
  /** Whether the item at this position (0-based) goes to a waiting reader without the turn. */
  readonly atOnce?: (position: number, item: T) => boolean;
}

/**
 * Resolves one event-loop turn later: after the immediates queued by the current turn's work.
 * The next decode step goes to llama.cpp from an immediate queued in the same microtasks that
 * deliver a token (node-llama-cpp's dispatch, or the batch loop's turn in ../llama/batch-scheduling.ts);
 * an immediate queued from inside an immediate runs on the next turn.
 */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

/** What the pump and the reader of one `readAhead` share. */
interface Ahead<T> {
  readonly queue: T[];
  /** Items taken from the source so far. */
  produced: number;
  finished: boolean;
  failure: { error: unknown } | undefined;
  stopped: boolean;
  wakeReader: (() => void) | undefined;
  wakePump: (() => void) | undefined;
}

function wakeReader<T>(ahead: Ahead<T>): void {
  ahead.wakeReader?.();
  ahead.wakeReader = undefined;
}

/** Reads `source` into the queue, at most `limit` items ahead of the reader, until it ends or the reader stops. */
async function pump<T>(source: AsyncGenerator<T, void, undefined>, limit: number, ahead: Ahead<T>): Promise<void> {
  try {
    while (!ahead.stopped) {
      if (ahead.queue.length >= limit) {
        await new Promise<void>((resolve) => (ahead.wakePump = resolve));
        continue;
      }
      const next = await source.next();
      if (next.done === true) break;
      ahead.queue.push(next.value);
      ahead.produced++;
      wakeReader(ahead);
    }
  } catch (error) {
    ahead.failure = { error };
  } finally {
    ahead.finished = true;
    wakeReader(ahead);
  }
}

/**
 * Pulls `source` eagerly: the next item is requested as soon as the previous one arrives, not
 * when the reader asks for it, and a reader that was waiting takes the new item one event-loop
 * turn later (`nextTurn`). For a generation this means the next decode step is dispatched to
 * llama.cpp before the transport serialises and writes the current token, so that work overlaps
 * with decoding (on llama.cpp's thread) instead of adding to every token's latency. Measured
 * with one stream on 2 cores: without the turn, every token was written before the next step was
 * dispatched, and one stream through the edge ran at 0.82–0.89× of in-process decoding; with it,
 * 0.90–0.97×. A reader that is behind takes queued items at once, and so does one waiting for an
 * item `atOnce` names by its position (or the item): for a generation, the first token, whose latency is the
 * time to first token (the turn costs it ~0.3 ms, the dispatch's own work). At most `limit` items
 * wait for the reader; a reader that stops early ends the source (its `finally` runs).
 */
export async function* readAhead<T>(
  source: AsyncGenerator<T, void, undefined>,
  { limit = READ_AHEAD_LIMIT, atOnce = () => false }: ReadAheadOptions<T> = {},
): AsyncGenerator<T, void, undefined> {
  const ahead: Ahead<T> = {
    queue: [],
    produced: 0,
    finished: false,
    failure: undefined,
    stopped: false,
    wakeReader: undefined,
    wakePump: undefined,
  };
  const pumping = pump(source, limit, ahead);
  try {
    for (;;) {
      if (ahead.queue.length > 0) {
        const item = ahead.queue.shift() as T;
        ahead.wakePump?.();
        ahead.wakePump = undefined;
        yield item;
        continue;
      }
      if (ahead.failure !== undefined) throw ahead.failure.error;
      if (ahead.finished) return;
      await new Promise<void>((resolve) => (ahead.wakeReader = resolve));
      const head = ahead.queue[0];
      if (head === undefined || !atOnce(ahead.produced - ahead.queue.length, head)) await nextTurn();
    }
  } finally {
    if (!ahead.finished) {
      ahead.stopped = true;
      ahead.wakePump?.();
      // Waits for the step in flight, then runs the source's own `finally`.
      await source.return(undefined);
    }
    await pumping;
  }
}
