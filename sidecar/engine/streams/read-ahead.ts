// Lets a generation run ahead of its transport by a bounded number of events (`readAhead`), so
// writing a token overlaps the next decode step.
/** Events a generation may run ahead of a slow reader before it waits for it. */
const READ_AHEAD_LIMIT = 256;

export interface ReadAheadOptions {
  /** Items that may wait for the reader (default READ_AHEAD_LIMIT). */
  readonly limit?: number;
  /** Whether the item at this position (0-based) goes to a waiting reader without the turn. */
  readonly atOnce?: (position: number) => boolean;
}

/**
 * Resolves one event-loop turn later: after the immediates queued by the current turn's work.
 * The next decode step goes to llama.cpp from an immediate queued in the same microtasks that
 * deliver a token (node-llama-cpp's dispatch, or the batch loop's turn in ../llama/batch-scheduling.ts);
 * an immediate queued from inside an immediate runs on the next turn.
 */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

/**
 * Pulls `source` eagerly: the next item is requested as soon as the previous one arrives, not
 * when the reader asks for it, and a reader that was waiting takes the new item one event-loop
 * turn later (`nextTurn`). For a generation this means the next decode step is dispatched to
 * llama.cpp before the transport serialises and writes the current token, so that work overlaps
 * with decoding (on llama.cpp's thread) instead of adding to every token's latency. Measured
 * with one stream on 2 cores: without the turn, every token was written before the next step was
 * dispatched, and one stream through the edge ran at 0.82–0.89× of in-process decoding; with it,
 * 0.90–0.97×. A reader that is behind takes queued items at once, and so does one waiting for an
 * item `atOnce` names by its position: for a generation, the first token, whose latency is the
 * time to first token (the turn costs it ~0.3 ms, the dispatch's own work). At most `limit` items
 * wait for the reader; a reader that stops early ends the source (its `finally` runs).
 */
export async function* readAhead<T>(
  source: AsyncGenerator<T, void, undefined>,
  { limit = READ_AHEAD_LIMIT, atOnce = () => false }: ReadAheadOptions = {},
): AsyncGenerator<T, void, undefined> {
  const queue: T[] = [];
  let produced = 0;
  let finished = false;
  let failure: { error: unknown } | undefined;
  let stopped = false;
  let wakeReader: (() => void) | undefined;
  let wakePump: (() => void) | undefined;
  const notify = (): void => {
    wakeReader?.();
    wakeReader = undefined;
  };

  const pump = async (): Promise<void> => {
    try {
      while (!stopped) {
        if (queue.length >= limit) {
          await new Promise<void>((resolve) => (wakePump = resolve));
          continue;
        }
        const next = await source.next();
        if (next.done === true) break;
        queue.push(next.value);
        produced++;
        notify();
      }
    } catch (error) {
      failure = { error };
    } finally {
      finished = true;
      notify();
    }
  };
  const pumping = pump();

  try {
    for (;;) {
      if (queue.length > 0) {
        const item = queue.shift() as T;
        wakePump?.();
        wakePump = undefined;
        yield item;
        continue;
      }
      if (failure !== undefined) throw failure.error;
      if (finished) return;
      await new Promise<void>((resolve) => (wakeReader = resolve));
      if (queue.length === 0 || !atOnce(produced - queue.length)) await nextTurn();
    }
  } finally {
    if (!finished) {
      stopped = true;
      wakePump?.();
      // Waits for the step in flight, then runs the source's own `finally`.
      await source.return(undefined);
    }
    await pumping;
  }
}
