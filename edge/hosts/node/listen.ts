// One HTTP listener of the Node edge (its main port, the render port): a fetch handler served on a host and port,
// the server given its settings before it accepts a connection.
import { serve } from "@hono/node-server";
import type { Server, ServerOptions } from "node:http";
import type { AddressInfo } from "node:net";

/** node:http's options and what is set on the server before it listens (limits, connection hooks). */
export interface ListenSettings {
  readonly serverOptions: ServerOptions;
  configure(server: Server): void;
}

/** Serves `handle` on `hostname:port`; resolves with the server and its URL (e.g. "http://127.0.0.1:8080"). */
export function listenHttp(
  handle: (request: Request) => Promise<Response>,
  hostname: string,
  port: number,
  settings: ListenSettings,
): Promise<{ server: Server; url: string }> {
  return new Promise((resolve, reject) => {
    const options = { fetch: handle, port, hostname, serverOptions: settings.serverOptions };
    const server = serve(options, (info: AddressInfo) => {
      const shownHost = info.family === "IPv6" ? `[${info.address}]` : info.address;
      resolve({ server, url: `http://${shownHost}:${info.port}` });
    }) as Server;
    settings.configure(server);
    server.once("error", reject);
  });
}
