// Requests that run one after another behind a bounded wait (`OneAtATime`): the embedding and the
// ranking contexts each take one request at a time.
import { overloaded } from "../errors.js";

export class OneAtATime {
  #tail: Promise<unknown> = Promise.resolve();
  #waiting = 0;

  /** `what` names the requests in the refusal ("embedding"). */
  constructor(
    private readonly maxQueue: number,
    private readonly what: string,
  ) {}

  /** Runs `work` after the requests before it; refused with RESOURCE_EXHAUSTED when more than `maxQueue` wait. */
  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#waiting > this.maxQueue) throw overloaded(`too many ${this.what} requests are waiting`);
    this.#waiting += 1;
    const run = this.#tail.then(() => {
      this.#waiting -= 1;
      return work();
    });
    this.#tail = run.catch(() => undefined);
    return run;
  }
}
