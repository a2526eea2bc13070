// Manual smoke test helper: a scripted fake sidecar on gRPC-Web, for running the
// edge (Node or `wrangler dev`) without a model.
//   npx tsx test/support/serve-fake-sidecar.ts [port=50051] [token delay ms=200]
// Every Generate streams "Once upon a time there lived a tiny llama" token by token
// and logs when the caller cancels.
import { argv } from "node:process";
import { delay, FakeSidecar, finish, start, token, type Step } from "./fake-sidecar.js";
import { serveGrpcWeb } from "./grpc-web-server.js";

const port = Number(argv[2] ?? 50051);
const delayMs = Number(argv[3] ?? 200);
const words = ["Once", " upon", " a", " time", " there", " lived", " a", " tiny", " llama"];
const script: Step[] = [
  start("fake-model", 4),
  ...words.flatMap((word) => [delay(delayMs), token(word)]),
  finish("stop", { promptTokens: 4, completionTokens: words.length }),
];
const fake = new FakeSidecar(script);
const server = await serveGrpcWeb(fake, port);
console.log(`fake sidecar (gRPC-Web) on ${server.url}`);
setInterval(() => {
  fake.calls.forEach((call, i) => {
    if (call.signal?.aborted === true && !(call as { logged?: boolean }).logged) {
      (call as { logged?: boolean }).logged = true;
      console.log(`call ${i} cancelled by the caller`);
    }
  });
}, 50);
