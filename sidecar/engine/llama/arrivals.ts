// Prompts that arrive together go out in one batch (`Arrivals`): while the context is idle, the
// first batch waits for the requests already on their way to it. docs/decisions.md, "Batch
// scheduling".
import type { LlamaContextSequence } from "node-llama-cpp";
import { sequenceIdOf } from "./llama-internals.js";

/**
 * The longest an idle context's first batch waits for requests still on their way (planning their
 * prompt, taking a sequence, restoring a saved state). A lone request never waits.
 */
export const ARRIVAL_WAIT_MS = 25;

/** One request on its way to its first decode. */
export interface Arrival {
  /** The sequence it took: its first queued decode ends its arrival. */
  bind(sequence: LlamaContextSequence): void;
  /** It will not queue a decode soon (it waits for a sequence, failed or ended). Idempotent. */
  leave(): void;
}

/**
 * Counts the requests on their way to their first decode and holds an idle context's first batch
 * (node-llama-cpp's `dispatchSchedule`) while any is, at most ARRIVAL_WAIT_MS: four prompts sent at
 * once then go out as one batch instead of the first alone and the other three after it (each
 * waiting for the first's whole evaluation). Only a batch of prompts waits; one holding a
 * stream's next token goes at once.
 */
export class Arrivals {
  #count = 0;
  /**
   * Requests the callers said are right behind those that arrived (GenerateRequest.arriving_with)
   * and not here yet: the batch waits for them too, until they come or the wait ends.
   */
  #announced = 0;
  /** The arrival of the request on each sequence (by id), until its first decode is queued. */
  readonly #bound = new Map<number, () => void>();
  #held: (() => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Whether the decodes queued now hold a stream's next token (set by the scheduler). */
  streaming: () => boolean = () => false;

  /** One request on its way; `behind`: the requests its caller said are right behind it. */
  arrive(behind = 0): Arrival {
    // It may be one of those announced; the latest word on how many are still to come holds.
    this.#announced = Math.max(this.#announced - 1, behind, 0);
    this.#count++;
    let gone = false;
    let on: number | undefined;
    const leave = (): void => {
      if (gone) return;
      gone = true;
      if (on !== undefined && this.#bound.get(on) === leave) this.#bound.delete(on);
      this.#count--;
      if (this.#count === 0 && this.#announced === 0) this.#release();
    };
    return {
      bind: (sequence) => {
        if (gone) return;
        on = sequenceIdOf(sequence);
        this.#bound.set(on, leave);
      },
      leave,
    };
  }

  /** A decode of sequence `sequenceId` was queued: the request bound to it has arrived. */
  queued(sequenceId: number): void {
    this.#bound.get(sequenceId)?.();
  }

  /** node-llama-cpp's `dispatchSchedule`: called when an idle context gets a decode. */
  readonly schedule = (dispatch: () => void): void => {
    if ((this.#count === 0 && this.#announced === 0) || this.streaming()) {
      setImmediate(dispatch);
      return;
    }
    // A later call supersedes an earlier one (node-llama-cpp makes a stale dispatch do nothing).
    this.#held = dispatch;
    this.#timer ??= setTimeout(() => this.#release(), ARRIVAL_WAIT_MS);
  };

  #release(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    // Those announced and not come in the wait are not waited for again.
    this.#announced = 0;
    const dispatch = this.#held;
    this.#held = undefined;
    if (dispatch !== undefined) setImmediate(dispatch);
  }
}
