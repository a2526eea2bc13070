// The events of one resumable generation, kept in order so that any number of readers can read
// them from any position and then follow the live end.

export class ReplayBuffer<T> {
  readonly #events: T[] = [];
  #bytes = 0;
  #done = false;
  #failure: { error: unknown } | undefined;
  #waiting: (() => void)[] = [];

  get length(): number {
    return this.#events.length;
  }

  /** The size of the kept events, as estimated by `push`'s callers. */
  get bytes(): number {
    return this.#bytes;
  }

  get done(): boolean {
    return this.#done;
  }

  push(event: T, bytes: number): void {
    this.#events.push(event);
    this.#bytes += bytes;
    this.#wake();
  }

  /** No more events; with an error, readers get it after the last event. */
  end(failure?: { error: unknown }): void {
    this.#done = true;
    this.#failure = failure;
    this.#wake();
  }

  /**
   * The events from `from` on, then the live ones until the end (with `snapshot`, only those kept
   * now); stops quietly when `signal` aborts.
   */
  async *read(from: number, signal: AbortSignal, snapshot = false): AsyncGenerator<T, void, undefined> {
    let next = from;
    const until = snapshot ? this.#events.length : Infinity;
    for (;;) {
      while (next < this.#events.length && next < until) yield this.#events[next++] as T;
      if (next >= until) return;
      if (this.#done) {
        if (this.#failure !== undefined) throw this.#failure.error;
        return;
      }
      if (signal.aborted) return;
      await new Promise<void>((resolve) => {
        const onAbort = (): void => resolve();
        signal.addEventListener("abort", onAbort, { once: true });
        this.#waiting.push(() => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        });
      });
      if (signal.aborted) return;
    }
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const wake of waiting) wake();
  }
}
