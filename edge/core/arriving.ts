// The generation requests this app holds between their arrival and their sidecar call
// (`Arriving`): a burst of clients arriving together. The first of them to reach its sidecar says
// how many are right behind it (proto: GenerateRequest.arriving_with), so that the sidecar's idle
// context waits for them and evaluates their prompts in one batch (docs/decisions.md, "Batch
// scheduling"). Where the host sees connections (Node), one just opened counts too: its request is
// on its way. Memory of this process or isolate only.

/** One request's place among those arriving. */
export interface ArrivalTicket {
  /**
   * Its sidecar call is about to be made: waits for the requests already at this process's door
   * (`Arriving.#gathered`), then says how many others are still on their way. Sent once.
   */
  sent(): Promise<number>;
  /** It will make no sidecar call (refused, failed). Idempotent; no-op after `sent`. */
  leave(): void;
}

/**
 * Event-loop turns a request waits before its sidecar call, at least: the first ends the reading
 * of the sockets already underway when it started, the second reads them once more, so requests
 * whose bytes came in meanwhile are counted. Nothing waiting, two turns take a few microseconds.
 */
const GATHER_MIN_TURNS = 2;
/** At most this many turns, however long a burst keeps coming. */
export const GATHER_MAX_TURNS = 8;

type Schedule = (run: () => void) => void;
// Node's setImmediate runs after the sockets are read; where there is none (Workers), a 0 ms timer.
const scheduled = (globalThis as { setImmediate?: Schedule }).setImmediate;
const nextTurn = (): Promise<void> =>
  new Promise((resolve) => (scheduled ?? ((run: () => void) => setTimeout(run, 0)))(resolve));

/**
 * How long a connection that sent no request yet counts as one on its way: no longer than the
 * sidecar's first batch waits for those announced (sidecar/engine/llama/arrivals.ts).
 */
export const OPENED_COUNTS_MS = 25;

export class Arriving {
  #count = 0;
  /** Requests ever entered: a turn that raised it brought a new one. */
  #entered = 0;
  /** When each connection still without a request opened (`opened`). */
  readonly #opened = new Set<{ readonly at: number }>();
  /** The wait underway (`#gathered`): every request whose call is due meanwhile ends with it. */
  #gathering: Promise<void> | undefined;

  readonly #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /**
   * A client connection opened and sent no request yet: until the returned function is called (its
   * first request came, or it closed), at most OPENED_COUNTS_MS, it counts among those on their way.
   * A client sending several requests at once opens a connection for each that its pool lacks, and
   * their requests come a few ms after the first one's.
   */
  opened(): () => void {
    const entry = { at: this.#now() };
    this.#opened.add(entry);
    return () => this.#opened.delete(entry);
  }

  enter(): ArrivalTicket {
    this.#count++;
    this.#entered++;
    let here = true;
    const leave = (): void => {
      if (!here) return;
      here = false;
      this.#count--;
    };
    return {
      sent: async () => {
        if (here) await this.#burst();
        const others = here ? this.#count - 1 + this.#connecting() : 0;
        leave();
        return others;
      },
      leave,
    };
  }

  /** The wait underway, or a new one: those due during it all end with it. */
  #burst(): Promise<void> {
    if (this.#gathering === undefined) {
      this.#gathering = this.#gathered().finally(() => {
        this.#gathering = undefined;
      });
    }
    return this.#gathering;
  }

  /** Connections opened within OPENED_COUNTS_MS that sent no request yet; older ones are forgotten. */
  #connecting(): number {
    const since = this.#now() - OPENED_COUNTS_MS;
    let count = 0;
    for (const entry of this.#opened) {
      if (entry.at >= since) count++;
      else this.#opened.delete(entry);
    }
    return count;
  }

  /**
   * Waits while requests keep coming: GATHER_MIN_TURNS event-loop turns, then more while the last
   * one brought a new request, at most GATHER_MAX_TURNS. Without it, four requests a client sent at
   * once reached the Node edge 1–5 ms apart (each waits for the one before to be handled), the
   * first went to its sidecar alone, and its prompt was evaluated before the others came. One wait
   * serves every request due during it: the burst's calls then go in the same turn, where each
   * waiting turns of its own sent them ~1 ms apart, each turn slowed by the calls already made.
   */
  async #gathered(): Promise<void> {
    for (let turn = 1; turn <= GATHER_MAX_TURNS; turn++) {
      const before = this.#entered;
      await nextTurn();
      if (turn >= GATHER_MIN_TURNS && this.#entered === before) return;
    }
  }
}
