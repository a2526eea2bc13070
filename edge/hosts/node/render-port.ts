// `RENDER_PORT`: vLLM's render API alone (POST /v1/chat/completions/render, POST /v1/completions/render) on a port
// of its own, without keys, for llm-d's endpoint picker: its token-producer asks each request's token ids there and
// sends no key. It runs inside the cluster; the Gateway's route reaches only the edge's main port. Every other path
// is a 404 (App.render).
import { serve } from "@hono/node-server";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { App } from "../../http/app.js";

export interface RenderListening {
  /** e.g. "http://127.0.0.1:8000" */
  readonly url: string;
  close(): Promise<void>;
}

export function listenRender(app: App, hostname: string, port: number): Promise<RenderListening> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: (request) => app.render(request), port, hostname }, (info: AddressInfo) => {
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
    server.once("error", reject);
  });
}
