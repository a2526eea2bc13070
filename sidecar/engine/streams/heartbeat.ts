// Heartbeats on a generation's event stream: after `intervalMs` without an event, a heartbeat
// event is sent, so a caller can tell a busy sidecar (a long queue wait, a long prompt) from a
// stalled one (proto: Heartbeat).

const BEAT = Symbol("beat");

export async function* withHeartbeats<T>(
  source: AsyncGenerator<T, void, undefined>,
  intervalMs: number,
  heartbeat: () => T,
): AsyncGenerator<T, void, undefined> {
  if (intervalMs <= 0) return yield* source;
  let pending = source.next();
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const beat = new Promise<typeof BEAT>((resolve) => {
        timer = setTimeout(() => resolve(BEAT), intervalMs);
      });
      const result = await Promise.race([pending, beat]).finally(() => clearTimeout(timer));
      if (result === BEAT) {
        yield heartbeat();
        continue;
      }
      if (result.done === true) return;
      yield result.value;
      pending = source.next();
    }
  } finally {
    // The source may be waiting inside a step: return() ends it once that step settles.
    void pending.then(
      () => source.return(undefined),
      () => undefined,
    );
  }
}
