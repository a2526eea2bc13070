// The generation requests this app holds between their arrival and their sidecar call
// (`Arriving`): a burst of clients arriving together. The first of them to reach its sidecar says
// how many are right behind it (proto: GenerateRequest.arriving_with), so that the sidecar's idle
// context waits for them and evaluates their prompts in one batch (docs/decisions.md, "Batch
// scheduling"). Memory of this process or isolate only.

/** One request's place among those arriving. */
export interface ArrivalTicket {
  /** Its sidecar call is about to be made: how many others are still on their way. Idempotent. */
  sent(): number;
  /** It will make no sidecar call (refused, failed). Idempotent; no-op after `sent`. */
  leave(): void;
}

export class Arriving {
  #count = 0;

  enter(): ArrivalTicket {
    this.#count++;
    let here = true;
    const leave = (): void => {
      if (!here) return;
      here = false;
      this.#count--;
    };
    return {
      sent: () => {
        const others = here ? this.#count - 1 : 0;
        leave();
        return others;
      },
      leave,
    };
  }
}
