// One cancellation chain (docs/decisions.md, "Cancellation chain"): a controller that aborts with
// the signal it follows (the client's request, a caller's call), and also on its own.

/** A controller that aborts when `signal` does (at once if it has), or when `abort()` is called. */
export function linkedAbort(signal: AbortSignal): AbortController {
  const controller = new AbortController();
  if (signal.aborted) controller.abort(signal.reason);
  else signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
  return controller;
}
