// The Responses WebSocket mode, protocol-neutral and host-neutral (docs/contract.md, "Responses
// WebSocket mode"): each `response.create` message is answered by the app's own
// POST /v1/responses with stream: true (the same validation, keys, limits, store and encoder),
// its server-sent events sent back one JSON message each; an HTTP error becomes an `error`
// message. Turns run one at a time, in order; a closed socket aborts the running one (the
// generation stops as when an HTTP client leaves) and drops the rest.
import { ConnectionChain, type CreateBody } from "./chain.js";
import type { SocketPort, SocketSession } from "./port.js";
import { sseData } from "./sse-reader.js";
import { shifted } from "../../state/responses/input.js";

/** The headers of the upgrade that are the WebSocket's own, not the requests made for it. */
const SOCKET_HEADERS = /^(connection|upgrade|content-length|transfer-encoding|sec-websocket-.*)$/i;

/** An `error` message: the HTTP status and OpenAI's error object. */
export function errorMessage(
  status: number,
  error: { type: string; code: string | null; message: string; param: string | null },
): string {
  return JSON.stringify({ type: "error", status, error });
}

/** The body of a `response.create` message, or the `error` message that refuses it. */
export function parseCreate(text: string): { body: CreateBody } | { refusal: string } {
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    return refuse("The message is not valid JSON.", null, "invalid_json");
  }
  if (typeof event !== "object" || event === null || Array.isArray(event))
    return refuse("The message must be a JSON object.", null, "invalid_event");
  const { type, stream: _stream, ...body } = event as Record<string, unknown>;
  if (type !== "response.create")
    return refuse(
      `Unknown event type ${JSON.stringify(type)}: this socket takes \`response.create\` messages.`,
      "type",
      "unknown_event_type",
    );
  if (body["background"] === true)
    return refuse("background is not supported in WebSocket mode.", "background", "unsupported_parameter");
  if (body["generate"] === false)
    return refuse(
      "generate: false (a warm-up without output) is not supported by this server; send the turn itself.",
      "generate",
      "unsupported_parameter",
    );
  delete body["generate"];
  return { body };
}

function refuse(message: string, param: string | null, code: string): { refusal: string } {
  return { refusal: errorMessage(400, { type: "invalid_request_error", code, message, param }) };
}

export class ResponsesSession implements SocketSession {
  private turns: Promise<void> = Promise.resolve();
  private running: AbortController | undefined;
  private open = true;
  private readonly chain = new ConnectionChain();

  constructor(
    private readonly port: SocketPort,
    private readonly upgrade: Request,
    private readonly fetch: (request: Request) => Promise<Response>,
    private readonly report: (error: unknown) => void,
  ) {}

  message(text: string): void {
    this.turns = this.turns.then(() => this.turn(text)).catch(this.report);
  }

  closed(): void {
    this.open = false;
    this.running?.abort(new Error("the WebSocket closed"));
  }

  private send(text: string): void {
    if (this.open) this.port.send(text);
  }

  private async turn(text: string): Promise<void> {
    if (!this.open) return;
    const parsed = parseCreate(text);
    if ("refusal" in parsed) return this.send(parsed.refusal);
    const { body, fromSocket, base } = this.chain.continued(parsed.body);
    const abort = new AbortController();
    this.running = abort;
    try {
      const response = await this.fetch(this.requestFor(body, abort.signal));
      if (response.ok && response.body !== null) await this.relay(response.body, body, fromSocket);
      else {
        this.chain.forget(fromSocket);
        this.send(await errorOf(response, base));
      }
    } finally {
      this.running = undefined;
    }
  }

  /** POST /v1/responses with `body` streamed, under the upgrade's URL and credentials. */
  private requestFor(body: CreateBody, signal: AbortSignal): Request {
    const headers = new Headers();
    for (const [name, value] of this.upgrade.headers) if (!SOCKET_HEADERS.test(name)) headers.set(name, value);
    headers.set("content-type", "application/json");
    return new Request(this.upgrade.url, {
      method: "POST",
      headers,
      body: JSON.stringify({ ...body, stream: true }),
      signal,
    });
  }

  /**
   * Sends each event of the stream as one message (not the HTTP stream's closing `[DONE]`: a
   * socket's turn ends at its terminal event); remembers a finished response, forgets a failed
   * continuation.
   */
  private async relay(
    stream: ReadableStream<Uint8Array>,
    body: CreateBody,
    fromSocket: string | undefined,
  ): Promise<void> {
    for await (const data of sseData(stream)) {
      if (!this.open) break;
      if (data === "[DONE]") continue;
      const event = JSON.parse(data) as StreamEvent;
      this.port.send(fromSocket === undefined ? data : JSON.stringify(continuing(event, fromSocket)));
      if ((event.type === "response.completed" || event.type === "response.incomplete") && event.response !== undefined)
        this.chain.remember(body, event.response);
      else if (event.type === "response.failed" || event.type === "error") this.chain.forget(fromSocket);
    }
  }
}

interface StreamEvent {
  type?: unknown;
  response?: { id?: unknown; store?: unknown; output?: unknown; previous_response_id?: unknown };
}

/**
 * An event of a turn continued on the socket: its Response names the previous response it continued, as one continued
 * from the store does.
 */
function continuing(event: StreamEvent, previousId: string): StreamEvent {
  return event.response === undefined
    ? event
    : { ...event, response: { ...event.response, previous_response_id: previousId } };
}

/**
 * The `error` message of an HTTP error answer (its OpenAI error object and status); `input[N]` in
 * it counted in the request's own input when `base` context items came first (as a stored
 * continuation's errors are, state/responses/input.ts).
 */
async function errorOf(response: Response, base: number): Promise<string> {
  const fallback = {
    type: "server_error",
    code: null as string | null,
    message: `The request failed with status ${response.status}.`,
    param: null as string | null,
  };
  try {
    const { error } = (await response.json()) as { error?: typeof fallback };
    const found = { ...fallback, ...error };
    const param = found.param === null ? null : shifted(found.param, base);
    return errorMessage(response.status, { ...found, message: shifted(found.message, base), param });
  } catch {
    return errorMessage(response.status, fallback);
  }
}
