// Stop sequences on generated text (`StopSequenceFilter`).
/**
 * Turns generated text fragments into text that is safe to send: nothing that might be the
 * beginning of a stop sequence leaves until it is known not to be one, and generation ends
 * before the first stop sequence, which is never sent in whole or in part.
 */
export interface TextStep {
  /** Text that is now final. */
  readonly text: string;
  /** The stop sequence that ended generation, if this step found one. */
  readonly stop?: string;
}

export class StopSequenceFilter {
  #held = "";
  readonly #stops: readonly string[];

  constructor(stops: readonly string[]) {
    this.#stops = stops.filter((s) => s.length > 0);
  }

  push(fragment: string): TextStep {
    const text = this.#held + fragment;
    this.#held = "";
    let first = -1;
    let found: string | undefined;
    for (const stop of this.#stops) {
      const at = text.indexOf(stop);
      if (at !== -1 && (first === -1 || at < first)) {
        first = at;
        found = stop;
      }
    }
    if (found !== undefined) return { text: text.slice(0, first), stop: found };
    const keep = this.#longestPendingSuffix(text);
    this.#held = text.slice(text.length - keep);
    return { text: text.slice(0, text.length - keep) };
  }

  /** Text still held back when generation ends without a stop sequence. */
  flush(): string {
    const rest = this.#held;
    this.#held = "";
    return rest;
  }

  #longestPendingSuffix(text: string): number {
    let best = 0;
    for (const stop of this.#stops) {
      const max = Math.min(stop.length - 1, text.length);
      for (let n = max; n > best; n--) {
        if (text.endsWith(stop.slice(0, n))) {
          best = n;
          break;
        }
      }
    }
    return best;
  }
}
