// Waiting in the registry: for the next change (a lease released, a model loaded or unloaded),
// and for a promise unless the caller leaves or the sidecar drains first.
import { cancelled, unavailable } from "../engine/engine-errors.js";

/** A promise that resolves at the next `notify()`: what loads waiting for room wait on. */
export class Changes {
  #resolve: () => void = () => undefined;
  #next: Promise<void> = this.#renew();

  /** Resolves at the next change. */
  next(): Promise<void> {
    return this.#next;
  }

  notify(): void {
    const resolve = this.#resolve;
    this.#next = this.#renew();
    resolve();
  }

  #renew(): Promise<void> {
    return new Promise<void>((resolve) => (this.#resolve = resolve));
  }
}

/** `pending`, unless `drain` aborts first (UNAVAILABLE) or `caller` does (CANCELLED). */
export function until<T>(pending: Promise<T>, drain: AbortSignal, caller: AbortSignal | undefined): Promise<T> {
  const signals = caller === undefined ? [drain] : [drain, caller];
  const refusal = (): Error => (drain.aborted ? unavailable("the sidecar is shutting down") : cancelled());
  if (signals.some((s) => s.aborted)) return Promise.reject(refusal());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(refusal());
    for (const s of signals) s.addEventListener("abort", onAbort, { once: true });
    pending.then(resolve, reject).finally(() => {
      for (const s of signals) s.removeEventListener("abort", onAbort);
    });
  });
}
