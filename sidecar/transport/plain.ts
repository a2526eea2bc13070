// The sidecar's plain HTTP endpoints beside gRPC-Web: GET /metrics (needs the token when one is
// set) and GET /healthz (open: 200 while serving, 503 while draining).
import type { PlainHandler } from "./grpc-web.js";

export interface PlainState {
  /** The metrics text (Prometheus exposition format). */
  metrics(): Promise<string>;
  /** True once the sidecar drains. */
  draining(): boolean;
  /** The token check for an `authorization` header value. */
  authorized(authorization: string | undefined): boolean;
}

export function plainHandler(state: PlainState): PlainHandler {
  return (request, response) => {
    const path = (request.url ?? "").split("?")[0];
    const reply = (status: number, type: string, body: string): void => {
      response.writeHead(status, { "content-type": type });
      response.end(body);
    };
    if (request.method === "GET" && path === "/metrics") {
      if (!state.authorized(request.headers.authorization)) {
        reply(401, "text/plain", "this sidecar needs its token: send 'authorization: Bearer <SIDECAR_TOKEN>'\n");
      } else {
        state.metrics().then(
          (text) => reply(200, "text/plain; version=0.0.4; charset=utf-8", text),
          () => reply(500, "text/plain", "metrics failed\n"),
        );
      }
    } else if (request.method === "GET" && path === "/healthz") {
      const ok = !state.draining();
      reply(ok ? 200 : 503, "text/plain", ok ? "ok\n" : "draining\n");
    } else {
      reply(404, "text/plain", "not found\n");
    }
  };
}
