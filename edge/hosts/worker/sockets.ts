// WebSockets under workerd (docs/decisions.md, "Responses WebSocket mode"): an upgrade the app
// has admitted and accepted (GET /v1/responses) gets a WebSocketPair; the server end carries the
// session's messages, the client end goes back in the 101 answer.
import type { SocketAcceptor } from "../../http/socket/port.js";

/** workerd's server end of a WebSocketPair, as far as it is used here. */
interface WorkerSocket {
  accept(): void;
  send(message: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close" | "error", listener: () => void): void;
}

/** The global WebSocketPair of workerd; undefined elsewhere. */
function pairConstructor(): (new () => { 0: WorkerSocket; 1: WorkerSocket }) | undefined {
  return (globalThis as { WebSocketPair?: new () => { 0: WorkerSocket; 1: WorkerSocket } }).WebSocketPair;
}

/** The app's `webSockets` option under workerd. */
export const workerSockets: SocketAcceptor = (_request, open) => {
  const Pair = pairConstructor();
  if (Pair === undefined) throw new Error("WebSocketPair is not available in this runtime");
  const { 0: client, 1: server } = new Pair();
  server.accept();
  const send = (text: string) => {
    try {
      server.send(text);
    } catch {
      // the socket is closing: its close event ends the session
    }
  };
  const session = open({ send, close: (code, reason) => server.close(code, reason) });
  server.addEventListener("message", ({ data }) => {
    if (typeof data === "string") session.message(data);
    else server.close(1003, "text messages only");
  });
  server.addEventListener("close", () => {
    session.closed();
    try {
      server.close(1000, "closed"); // answers the client's close where workerd does not on its own
    } catch {
      // already closed
    }
  });
  server.addEventListener("error", () => session.closed());
  return new Response(null, { status: 101, webSocket: client } as ResponseInit);
};
