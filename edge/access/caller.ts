// Who made a request, once the access policy admitted it: read by the routes (the sidecar's
// fair queue, stored objects' owner, the request log) without passing it through every call.
export interface Caller {
  /** A configured key's id (`key_…`), or `anonymous` without keys. */
  readonly keyId: string;
}

export const ANONYMOUS: Caller = { keyId: "anonymous" };

const callers = new WeakMap<Request, Caller>();

export function setCaller(request: Request, caller: Caller): void {
  callers.set(request, caller);
}

/** The request's caller; `anonymous` for a request the policy did not see (tests, internal). */
export function callerOf(request: Request): Caller {
  return callers.get(request) ?? ANONYMOUS;
}
