// A generation's events with something to do once they end (`onEnd`): the model's lease is
// released when the generation itself is done, whether its reader stayed, left, or never started.

/** `source`'s events; `end` runs once when they end: finished, failed, or returned (even before the first event). */
export function onEnd<T>(
  source: AsyncGenerator<T, void, undefined>,
  end: () => void,
): AsyncGenerator<T, void, undefined> {
  let ended = false;
  const once = (): void => {
    if (ended) return;
    ended = true;
    end();
  };
  async function* run(): AsyncGenerator<T, void, undefined> {
    try {
      yield* source;
    } finally {
      once();
    }
  }
  const events = run();
  const stop = events.return.bind(events);
  // A generator returned before it started skips its `finally`.
  events.return = async (value) => {
    try {
      return await stop(value);
    } finally {
      once();
    }
  };
  return events;
}
