// Requests that run one after another behind a bounded wait (`OneAtATime`): the embedding and the
// ranking contexts each take one request at a time; batch requests (proto: EmbedRequest.priority)
// only when no interactive one waits.
import { overloaded } from "../engine-errors.js";
import { BATCH_QUEUE_LIMIT } from "./idle-capacity.js";

export class OneAtATime {
  /** Requests waiting, interactive and batch; each starts its work and settles its caller. */
  readonly #interactive: (() => Promise<void>)[] = [];
  readonly #batch: (() => Promise<void>)[] = [];
  #running = false;

  /** `what` names the requests in the refusal ("embedding"). */
  constructor(
    private readonly maxQueue: number,
    private readonly what: string,
  ) {}

  /**
   * Runs `work` after the requests before it: every interactive one waiting before any batch one
   * (`batch`), each lane in arrival order. Refused with RESOURCE_EXHAUSTED when `maxQueue`
   * interactive requests wait (an interactive request), or BATCH_QUEUE_LIMIT batch ones (a batch one).
   */
  run<T>(work: () => Promise<T>, batch = false): Promise<T> {
    const lane = batch ? this.#batch : this.#interactive;
    if (lane.length >= (batch ? BATCH_QUEUE_LIMIT : this.maxQueue) && this.#running) {
      throw overloaded(`too many ${batch ? "batch " : ""}${this.what} requests are waiting`);
    }
    return new Promise<T>((resolve, reject) => {
      lane.push(() => Promise.resolve().then(work).then(resolve, reject));
      this.#next();
    });
  }

  #next(): void {
    if (this.#running) return;
    const job = this.#interactive.shift() ?? this.#batch.shift();
    if (job === undefined) return;
    this.#running = true;
    void job().finally(() => {
      this.#running = false;
      this.#next();
    });
  }
}
