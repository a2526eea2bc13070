// One port for native gRPC and HTTP/1.1 (gRPC-Web, plain endpoints), plain or TLS chosen by ALPN,
// and the connections it holds until they are drained.
import * as grpc from "@grpc/grpc-js";
import http from "node:http";
import net from "node:net";
import tls from "node:tls";

const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** PEM certificate chain and private key: the port then speaks TLS, both protocols chosen by ALPN. */
export interface TlsFiles {
  readonly cert: Buffer;
  readonly key: Buffer;
}

export interface Listening {
  readonly port: number;
  /** Stops accepting connections and closes idle ones; streams in progress finish first. */
  close(graceMs: number): Promise<void>;
  /**
   * Ends every HTTP/1.1 connection left, each after its response in progress (once drained): a
   * kept-alive connection would otherwise
   * go on answering "shutting down" to a client that reuses it, instead of failing so the client
   * reconnects (to a sidecar started again on the same port, say).
   */
  closeConnections(): void;
}

/**
 * The HTTP/1.1 server never listens itself, so Node tracks none of its connections: they are
 * kept here, each with its responses in progress, so that closing ends each one after its last.
 */
function trackConnections(httpServer: http.Server): { add(socket: net.Socket): void; closeAll(): void } {
  const sockets = new Map<net.Socket, number>();
  let closing = false;
  httpServer.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
    const socket = request.socket;
    sockets.set(socket, (sockets.get(socket) ?? 0) + 1);
    response.once("close", () => {
      const left = (sockets.get(socket) ?? 1) - 1;
      if (sockets.has(socket)) sockets.set(socket, left);
      if (closing && left === 0) socket.end();
    });
  });
  return {
    add(socket) {
      sockets.set(socket, 0);
      socket.once("close", () => sockets.delete(socket));
    },
    closeAll() {
      closing = true;
      for (const [socket, inProgress] of sockets) if (inProgress === 0) socket.end();
    },
  };
}

/**
 * One port for both protocols: a connection that opens with the HTTP/2 preface is native gRPC
 * and goes to grpc-js; anything else is HTTP/1.1 (gRPC-Web and plain endpoints). With TLS, the
 * client's ALPN choice (`h2` or `http/1.1`) decides, and the preface is sniffed without one.
 */
export async function listen(
  grpcServer: grpc.Server,
  http1: http.RequestListener,
  host: string,
  port: number,
  tlsFiles?: TlsFiles,
): Promise<Listening> {
  const injector = grpcServer.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const httpServer = http.createServer({ keepAliveTimeout: 30_000 }, http1);
  const http1Connections = trackConnections(httpServer);
  const route = (socket: net.Socket, http2: boolean): void => {
    if (http2) {
      injector.injectConnection(socket);
      return;
    }
    http1Connections.add(socket);
    httpServer.emit("connection", socket);
  };
  const accept = (socket: net.Socket): void => {
    socket.on("error", () => socket.destroy());
    const alpn = socket instanceof tls.TLSSocket ? socket.alpnProtocol : false;
    if (alpn === "h2" || alpn === "http/1.1") route(socket, alpn === "h2");
    else sniffPreface(socket, route);
  };
  // noDelay: without it, short calls wait ~40 ms on Nagle and delayed ACKs (measured: Tokenize 44 → 1.3 ms).
  const tcp =
    tlsFiles === undefined
      ? net.createServer({ pauseOnConnect: true, noDelay: true }, accept)
      : tls.createServer({ ...tlsFiles, ALPNProtocols: ["h2", "http/1.1"], noDelay: true }, accept);
  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject);
    tcp.listen(port, host, () => resolve());
  });
  const address = tcp.address();
  return {
    port: typeof address === "object" && address !== null ? address.port : port,
    closeConnections: () => http1Connections.closeAll(),
    async close(graceMs) {
      tcp.close();
      httpServer.closeIdleConnections();
      injector.drain(graceMs);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          httpServer.closeAllConnections();
          injector.destroy();
          resolve();
        }, graceMs);
        timer.unref();
        grpcServer.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

/** Reads the first bytes to tell HTTP/2 (the preface) from HTTP/1.1, then hands the socket on. */
function sniffPreface(socket: net.Socket, route: (socket: net.Socket, http2: boolean) => void): void {
  const sniff = (): void => {
    const head: Buffer | null = socket.read();
    if (head === null) return;
    const soFar = head.subarray(0, HTTP2_PREFACE.length);
    const maybeHttp2 = HTTP2_PREFACE.subarray(0, soFar.length).equals(soFar);
    // "PRI" cannot start an HTTP/1.1 request line this server answers; with fewer bytes, wait.
    if (maybeHttp2 && head.length < 3) {
      socket.unshift(head);
      return;
    }
    socket.off("readable", sniff);
    // The bytes read go back into the socket's buffer: HTTP/1.1 reads them from there, and
    // Node's HTTP/2 session takes a socket's buffered bytes before it reads its native handle.
    socket.unshift(head);
    route(socket, maybeHttp2);
  };
  socket.on("readable", sniff);
}
