// WebSockets on Node (docs/decisions.md, "Responses WebSocket mode"): an upgrade request goes
// through the app's fetch handler like any other (access, keys, limits, routes); where the app
// accepts it (GET /v1/responses), `ws` completes the handshake and carries the session's
// messages; otherwise the app's HTTP answer is written on the socket, which then closes.
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { SocketAcceptor, SocketPort, SocketSession } from "../../http/socket/port.js";

type Open = (port: SocketPort) => SocketSession;

export interface NodeSockets {
  /** The app's `webSockets` option. */
  readonly acceptor: SocketAcceptor;
  /** Routes `server`'s upgrade requests through `handle` (the host's fetch handler). */
  attach(server: Server, handle: (request: Request) => Promise<Response>): void;
  /** Closes every open WebSocket (the server is stopping). */
  closeAll(): void;
}

/** The Web Request of an upgrade request (no body). */
function requestOf(incoming: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return new Request(`http://${incoming.headers.host ?? "localhost"}${incoming.url ?? "/"}`, {
    method: incoming.method ?? "GET",
    headers,
  });
}

/** Writes an HTTP answer that refuses the upgrade, then closes the connection. */
async function writeRefusal(socket: Duplex, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const lines = [`HTTP/1.1 ${response.status} ${response.statusText || "Error"}`];
  for (const [name, value] of response.headers)
    if (name !== "content-length" && name !== "transfer-encoding") lines.push(`${name}: ${value}`);
  lines.push(`content-length: ${body.length}`, "connection: close");
  socket.end(Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`), body]));
}

/** Carries one accepted socket's text messages to its session, and its close. */
function wire(socket: WebSocket, open: Open): void {
  const session = open({ send: (text) => socket.send(text), close: (code, reason) => socket.close(code, reason) });
  socket.on("message", (data, isBinary) => {
    if (isBinary) socket.close(1003, "text messages only");
    else session.message(data.toString());
  });
  socket.on("close", () => session.closed());
  socket.on("error", () => socket.terminate());
}

/** WebSockets for a Node server; a message larger than `maxPayload` bytes closes its socket (1009). */
export function nodeSockets(maxPayload: number): NodeSockets {
  const accepted = new WeakMap<Request, Open>();
  const wss = new WebSocketServer({ noServer: true, maxPayload });
  const acceptor: SocketAcceptor = (request, open) => {
    accepted.set(request, open);
    // node:http cannot build a 101 here; the handshake is `ws`'s, below.
    return new Response(null, { status: 200 });
  };
  const upgrade = async (
    incoming: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    handle: (request: Request) => Promise<Response>,
  ) => {
    const request = requestOf(incoming);
    const response = await handle(request);
    const open = accepted.get(request);
    if (open === undefined) return writeRefusal(socket, response);
    wss.handleUpgrade(incoming, socket, head, (ws) => wire(ws, open));
  };
  return {
    acceptor,
    attach(server, handle) {
      server.on("upgrade", (incoming: IncomingMessage, socket: Duplex, head: Buffer) => {
        upgrade(incoming, socket, head, handle).catch(() => socket.destroy());
      });
    },
    closeAll() {
      for (const client of wss.clients) client.terminate();
    },
  };
}
