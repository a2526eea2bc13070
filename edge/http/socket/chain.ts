// The connection's own memory of its latest response (docs/contract.md, "Responses WebSocket
// mode"): a `previous_response_id` naming it is continued on this socket even with store: false,
// by sending its context (the earlier input and the response's output items) as input. A failed
// continuation forgets it; a closed socket forgets everything.

/** A `response.create` body once its `type` is taken off: the body of POST /v1/responses. */
export type CreateBody = Record<string, unknown>;

interface Latest {
  readonly id: string;
  /** The input that led to the response and its output items: the context a continuation sends. */
  readonly items: readonly unknown[];
}

/** The request's input as a list of items (a string is one user message, as the API reads it). */
function inputItems(input: unknown): unknown[] {
  if (input === undefined || input === null) return [];
  if (typeof input === "string") return [{ type: "message", role: "user", content: input }];
  return Array.isArray(input) ? input : [input];
}

/** A turn's body as sent, and when it continues the socket's response: its id and how many context items come first. */
export interface Continued {
  readonly body: CreateBody;
  readonly fromSocket: string | undefined;
  readonly base: number;
}

export class ConnectionChain {
  private latest: Latest | undefined;

  /**
   * The body to send for `body`: when its previous_response_id is this socket's latest response,
   * that response's context and the new input, without the id (stored or not); else `body` as it is.
   */
  continued(body: CreateBody): Continued {
    const id = body["previous_response_id"];
    if (this.latest === undefined || typeof id !== "string" || id !== this.latest.id)
      return { body, fromSocket: undefined, base: 0 };
    const { previous_response_id: _dropped, ...rest } = body;
    return {
      body: { ...rest, input: [...this.latest.items, ...inputItems(body["input"])] },
      fromSocket: id,
      base: this.latest.items.length,
    };
  }

  /**
   * Remembers a finished response of `body` (the body as sent) that the server did not store. One
   * that continued a stored response is not kept: its context is the store's, not this socket's.
   */
  remember(body: CreateBody, response: { id?: unknown; store?: unknown; output?: unknown }): void {
    if (typeof response.id !== "string" || response.store === true || !Array.isArray(response.output)) return;
    if (body["previous_response_id"] !== undefined && body["previous_response_id"] !== null) return;
    this.latest = { id: response.id, items: [...inputItems(body["input"]), ...response.output] };
  }

  /** Forgets the response `id` (a continuation of it failed). */
  forget(id: string | undefined): void {
    if (id !== undefined && this.latest?.id === id) this.latest = undefined;
  }
}
