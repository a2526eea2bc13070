// Who made a request, once the access policy admitted it: read by the routes (the sidecar's
// fair queue, stored objects' owner, the request log) without passing it through every call.
export interface Caller {
  /** A configured key's id (`key_…`), or `anonymous` without keys. */
  readonly keyId: string;
  /**
   * May change the catalogue (a pull by address, a delete): an `ADMIN_KEYS` key, or anyone on a server without keys
   * that serves loopback hosts only (whoever reaches it runs it). Never on an open server without keys.
   */
  readonly admin?: boolean;
}

export const ANONYMOUS: Caller = { keyId: "anonymous" };

/** The caller of a server without keys that serves loopback hosts only. */
export const LOCAL: Caller = { keyId: ANONYMOUS.keyId, admin: true };

const callers = new WeakMap<Request, Caller>();

export function setCaller(request: Request, caller: Caller): void {
  callers.set(request, caller);
}

/** The request's caller; `anonymous` for a request the policy did not see (tests, internal). */
export function callerOf(request: Request): Caller {
  return callers.get(request) ?? ANONYMOUS;
}
