// What a model's load has made so far (its context, tier, embedder, projector…), freed latest first: when a later
// step of the load fails (nothing it made stays in memory or published), and when the model is unloaded.
export class Teardown {
  readonly #steps: (() => unknown)[] = [];

  /** `free(value)` runs at teardown, before whatever was added earlier. Returns `value`. */
  add<T>(value: T, free: (value: T) => unknown): T {
    this.#steps.push(() => free(value));
    return value;
  }

  /** Frees everything added, latest first; every step runs, and the first failure is thrown once all have. */
  async run(): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (let step = this.#steps.pop(); step !== undefined; step = this.#steps.pop()) {
      try {
        await step();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== undefined) throw failure.error;
  }
}
