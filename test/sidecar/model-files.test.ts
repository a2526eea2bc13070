// The catalogue changed at run time over native gRPC, as a direct caller meets it: PullModel (a URL served by a
// local HTTP server; a file that is no model refused and removed; a name taken by another model ALREADY_EXISTS),
// DescribeModel (the header's metadata, long arrays only when verbose) and DeleteModel (a request in progress
// finishes first; the model is NOT_FOUND at once; a start-up path is FAILED_PRECONDITION).
import { Code, ConnectError } from "@connectrpc/connect";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { answer, ask } from "../support/catalogue.js";
import { clientsFor, collect, startTestSidecar, type InferenceClient } from "../support/sidecar.js";

const DEMO = readFileSync(modelPath("demo"));
const SCRIPTED = readFileSync(modelPath("scripted"));

let server: Server;
let base = "";
let folder = "";
let sidecar: RunningSidecar;
let client: InferenceClient;

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = request.url ?? "";
    const body = path.includes("broken") ? DEMO.subarray(0, 4000) : path.includes("other") ? SCRIPTED : DEMO;
    if (!path.endsWith(".gguf")) return void response.writeHead(404).end();
    response.writeHead(200, { "content-length": body.length }).end(request.method === "HEAD" ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  folder = mkdtempSync(join(tmpdir(), "llm-model-files-"));
  sidecar = await startTestSidecar({ model: modelPath("demo"), modelsDir: folder, contextSize: 512 });
  client = clientsFor(sidecar.url).grpc;
}, 90_000);
afterAll(async () => {
  await sidecar?.stop();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(folder, { recursive: true, force: true });
});

async function pull(source: string, alias = "") {
  const steps = [];
  for await (const step of client.pullModel({ source, alias })) steps.push(step);
  return steps;
}

async function code(promise: Promise<unknown>): Promise<[Code, string]> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  return error === undefined ? [Code.Unknown, "no error"] : [error.code, error.rawMessage];
}

describe("PullModel, DescribeModel and DeleteModel over native gRPC", () => {
  it("pulls a URL: the last step carries the catalogued model, its file measured; an alias reaches it", async () => {
    const steps = await pull(`${base}/first.gguf`, "first:v1");
    const last = steps.at(-1);
    expect(last?.model).toMatchObject({ id: "first", aliases: ["first:v1"], architecture: "llama" });
    expect(last?.model?.fileBytes).toBe(BigInt(DEMO.length));
    expect([last?.totalBytes, last?.completedBytes]).toEqual([BigInt(DEMO.length), BigInt(DEMO.length)]);
    expect(answer(await ask(client, "first:v1", "demo")).text).toBe(" Once upon a");
  });

  it("refuses what is no address, a file that is no model (deleted again), and a name another file holds", async () => {
    expect(await code(pull("first"))).toEqual([
      Code.InvalidArgument,
      '"first" is not a model address: pull hf:<user>/<repo>/<file>.gguf, hf:<user>/<repo>:<quant> or an http(s) ' +
        "URL of a GGUF file",
    ]);
    const [broken, why] = await code(pull(`${base}/broken.gguf`));
    expect(broken).toBe(Code.InvalidArgument);
    expect(why).toContain("is no usable model");
    expect(existsSync(join(folder, "broken.gguf"))).toBe(false);
    // `first` again from another host path: the same file name in the folder, already catalogued → the same model.
    expect((await pull(`${base}/again/first.gguf`)).at(-1)?.model?.id).toBe("first");
  });

  it("describes a model's header without loading it; long arrays only when verbose", async () => {
    const { metadata, path } = await client.describeModel({ model: "first" });
    expect(path).toBe(join(folder, "first.gguf"));
    expect(metadata).toMatchObject({ "general.architecture": "llama", "llama.block_count": 1 });
    expect(metadata?.["tokenizer.ggml.tokens"]).toBeNull();
    const verbose = await client.describeModel({ model: "first", verbose: true });
    expect(verbose.metadata?.["tokenizer.ggml.tokens"]).toHaveLength(285);
    expect(await code(client.describeModel({ model: "nothing" }))).toEqual([
      Code.NotFound,
      'model "nothing" is not in the catalogue',
    ]);
  });

  it("deletes once the request in progress is done; the model is gone at once; a start-up path is kept", async () => {
    await pull(`${base}/other.gguf`);
    const stream = client.generate({
      model: "other",
      input: { case: "prompt", value: "Once upon a time" },
      maxTokens: 8,
    });
    const events = stream[Symbol.asyncIterator]();
    expect((await events.next()).value?.event.case).toBe("start");
    const deleted = client.deleteModel({ model: "other" });
    const rest = await collect({ [Symbol.asyncIterator]: () => events });
    expect(rest.at(-1)?.case).toBe("finish");
    expect((await deleted).id).toBe("other");
    expect(existsSync(join(folder, "other.gguf"))).toBe(false);
    expect((await client.listModels({})).models.map((m) => m.id)).toEqual(["demo", "first"]);
    expect((await code(ask(client, "other", "demo")))[0]).toBe(Code.NotFound);
    expect(await code(client.deleteModel({ model: "demo" }))).toEqual([
      Code.FailedPrecondition,
      'model "demo" has no file in the models folder: only those are deleted',
    ]);
  });
});
