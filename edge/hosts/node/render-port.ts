// `RENDER_PORT`: vLLM's render API alone (POST /v1/chat/completions/render, POST /v1/completions/render) on a port
// of its own, without keys, for llm-d's endpoint picker: its token-producer asks each request's token ids there and
// sends no key. It runs inside the cluster; the Gateway's route reaches only the edge's main port. Every other path
// is a 404 (App.render).
import { serve } from "@hono/node-server";
import type { Server, ServerOptions } from "node:http";
import type { AddressInfo } from "node:net";
import type { App } from "../../http/app.js";

export interface RenderListening {
  /** e.g. "http://127.0.0.1:8000" */
  readonly url: string;
  close(): Promise<void>;
}

/** The main port's connection limits, applied to this one too (server.ts). */
export interface RenderLimits {
  readonly serverOptions: ServerOptions;
  configure(server: Server): void;
}

export function listenRender(app: App, hostname: string, port: number, limits: RenderLimits): Promise<RenderListening> {
  return new Promise((resolve, reject) => {
    const options = {
      fetch: (request: Request) => app.render(request),
      port,
      hostname,
      serverOptions: limits.serverOptions,
    };
    const server = serve(options, (info: AddressInfo) => {
      const shownHost = info.family === "IPv6" ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${shownHost}:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    }) as Server;
    limits.configure(server);
    server.once("error", reject);
  });
}
