// What a host (workerd's WebSocketPair, Node's `ws`) and the protocol-neutral WebSocket core
// (responses-session.ts) agree on: the core sends text and closes; the host delivers text and
// the close (docs/decisions.md, "Responses WebSocket mode").

/** The core's side of an accepted WebSocket. */
export interface SocketPort {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** What the host tells the core: each text message, and that the socket has closed. */
export interface SocketSession {
  message(text: string): void;
  closed(): void;
}

/**
 * A host's acceptance of a WebSocket upgrade the app has admitted: it opens the socket, wires it
 * to the session `open` returns, and answers the upgrade (workerd: a 101 carrying the client end;
 * Node: a placeholder the Node host replaces by its own handshake).
 */
export type SocketAcceptor = (request: Request, open: (port: SocketPort) => SocketSession) => Response;

/** True for a request asking to become a WebSocket (`Upgrade: websocket`). */
export function wantsWebSocket(request: Request): boolean {
  return request.method === "GET" && (request.headers.get("upgrade") ?? "").toLowerCase() === "websocket";
}
