// `RENDER_PORT`: vLLM's render API alone (POST /v1/chat/completions/render, POST /v1/completions/render) on a port
// of its own, without keys, for llm-d's endpoint picker: its token-producer asks each request's token ids there and
// sends no key. It runs inside the cluster; the Gateway's route reaches only the edge's main port. Every other path
// is a 404 (App.render).
import type { App } from "../../http/app.js";
import { listenHttp, type ListenSettings } from "./listen.js";

export interface RenderListening {
  /** e.g. "http://127.0.0.1:8000" */
  readonly url: string;
  close(): Promise<void>;
}

/** The render routes on `hostname:port`, under the main port's limits (`settings`). */
export async function listenRender(
  app: App,
  hostname: string,
  port: number,
  settings: ListenSettings,
): Promise<RenderListening> {
  const { server, url } = await listenHttp((request) => app.render(request), hostname, port, settings);
  return {
    url,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
