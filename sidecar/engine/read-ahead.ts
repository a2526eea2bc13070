/** Events a generation may run ahead of a slow reader before it waits for it. */
export const READ_AHEAD_LIMIT = 256;

/**
 * Pulls `source` eagerly: the next item is requested as soon as the previous one arrives, not
 * when the reader asks for it. For a generation this means the next decode step is queued before
 * the transport serialises and writes the current token, so that work overlaps with llama.cpp's
 * decoding (on its own thread) instead of adding to every token's latency. At most `limit` items
 * wait for the reader; a reader that stops early ends the source (its `finally` runs).
 */
export async function* readAhead<T>(source: AsyncGenerator<T, void, undefined>, limit = READ_AHEAD_LIMIT): AsyncGenerator<T, void, undefined> {
  const queue: T[] = [];
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
