// The optional second port (--metrics-port): GET /metrics and GET /healthz only, over plain HTTP,
// without the token. It lets something that cannot reach the main port or does not hold the token
// read the load: an Inference Gateway's endpoint picker scraping every pod, a kubelet probe while
// the main port stays on 127.0.0.1 inside the pod. It carries no gRPC and no prompt text.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { plainHandler, type PlainState } from "../transport/plain.js";

export interface MetricsListening {
  readonly port: number;
  close(): Promise<void>;
}

export async function listenMetrics(
  state: Omit<PlainState, "authorized">,
  host: string,
  port: number,
): Promise<MetricsListening> {
  const server = http.createServer(plainHandler({ ...state, authorized: () => true }));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
