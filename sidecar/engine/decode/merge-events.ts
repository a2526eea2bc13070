// Several event sources read at once and merged in the order their events come (`mergeEvents`):
// the choices of one request (several-choices.ts).

type Pulled<T> =
  | { readonly index: number; readonly next: IteratorResult<T, void> }
  | { readonly index: number; readonly error: unknown };

/**
 * The events of every source as they come. Each source is asked for its next event as soon as its
 * last one arrives, before that one is handed on, so all of them go on at once (for generations:
 * each queues its next decode step while the others' tokens are read). Ends when every source has
 * ended; the first failure ends it with that failure. A reader that stops early, or a failure, ends
 * every source (each waits for its step in flight, then runs its `finally`).
 */
export async function* mergeEvents<T>(
  sources: readonly AsyncGenerator<T, void, undefined>[],
): AsyncGenerator<T, void, undefined> {
  const pending = new Map<number, Promise<Pulled<T>>>();
  const pull = (index: number, source: AsyncGenerator<T, void, undefined>): void => {
    // Never rejects: a failure left unread after the merge ended must not go unhandled.
    pending.set(
      index,
      source.next().then(
        (next) => ({ index, next }),
        (error: unknown) => ({ index, error }),
      ),
    );
  };
  for (const [index, source] of sources.entries()) pull(index, source);
  try {
    while (pending.size > 0) {
      const pulled = await Promise.race(pending.values());
      if ("error" in pulled) throw pulled.error;
      const source = sources[pulled.index];
      if (pulled.next.done === true || source === undefined) {
        pending.delete(pulled.index);
        continue;
      }
      pull(pulled.index, source);
      yield pulled.next.value;
    }
  } finally {
    await Promise.allSettled(sources.map((source) => source.return(undefined)));
  }
}
