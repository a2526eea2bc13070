import * as grpc from "@grpc/grpc-js";
import http from "node:http";
import net from "node:net";

const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export interface Listening {
  readonly port: number;
  /** Stops accepting connections and closes idle ones; streams in progress finish first. */
  close(graceMs: number): Promise<void>;
}

/**
 * One port for both protocols: a connection that opens with the HTTP/2 preface is native gRPC
 * and goes to grpc-js; anything else is HTTP/1.1 (gRPC-Web and plain endpoints).
 */
export async function listen(
  grpcServer: grpc.Server,
  http1: http.RequestListener,
  host: string,
  port: number,
): Promise<Listening> {
  const injector = grpcServer.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const httpServer = http.createServer({ keepAliveTimeout: 30_000 }, http1);
  // noDelay: without it, short calls wait ~40 ms on Nagle and delayed ACKs (measured: Tokenize 44 → 1.3 ms).
  const tcp = net.createServer({ pauseOnConnect: true, noDelay: true }, (socket) => {
    socket.on("error", () => socket.destroy());
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
      if (maybeHttp2) injector.injectConnection(socket);
      else httpServer.emit("connection", socket);
    };
    socket.on("readable", sniff);
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject);
    tcp.listen(port, host, () => resolve());
  });
  const address = tcp.address();
  return {
    port: typeof address === "object" && address !== null ? address.port : port,
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
