// Ollama's pull by address and delete through the official `ollama` client, with keys on (a client key and an admin
// key), on Node and under workerd, in front of a real sidecar whose models folder starts empty but for nothing: a
// local HTTP server plays the remote host (a GGUF by URL, sent in slow chunks so that progress is seen) and Hugging
// Face (HF_ENDPOINT: the manifest of `hf.co/<user>/<repo>:<quant>`, then the file). The pulled model answers by its
// file name and by the address as written, /api/show reads its header, and a delete removes file and model;
// through an edge in front of two sidecars, both download at once and the client sees one pull.
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ollama, type ProgressResponse } from "ollama";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { describeOnRuntimes, type RuntimeEdge, startEdgeOn } from "../support/runtimes.js";
import { startTestSidecar } from "../support/sidecar.js";

const CLIENT_KEY = "pull-client-key";
const ADMIN_KEY = "pull-admin-key";
/** The demo model's bytes: any chat is answered `Hi there`. */
const DEMO = readFileSync(modelPath("demo"));
const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** The "remote host" (URLs) and "Hugging Face" (HF_ENDPOINT). */
let files: Server;
let hub: Server;
let base = "";
let folder = "";
let sidecar: RunningSidecar;
const savedEndpoint = process.env["HF_ENDPOINT"];

/** The file in four chunks 40 ms apart (several progress steps); a manifest for `someone/tiny-GGUF:Q8_0`. */
function serve(request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? "/", "http://x");
  if (url.pathname === "/v2/someone/tiny-GGUF/manifests/Q8_0") {
    response
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ ggufFile: { rfilename: "tiny-Q8_0.gguf", size: DEMO.length } }));
    return;
  }
  if (!url.pathname.endsWith(".gguf") || url.pathname.includes("missing")) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { "content-type": "application/octet-stream", "content-length": DEMO.length });
  if (request.method === "HEAD") return void response.end();
  const size = Math.ceil(DEMO.length / 4);
  const send = (at: number): void => {
    if (at >= DEMO.length) return void response.end();
    response.write(DEMO.subarray(at, at + size), () => setTimeout(() => send(at + size), 40));
  };
  send(0);
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  [files, hub] = [createServer(serve), createServer(serve)];
  base = await listen(files);
  // node-llama-cpp reads an address on HF_ENDPOINT's host as a Hugging Face one: the hub is `localhost`.
  process.env["HF_ENDPOINT"] = `${(await listen(hub)).replace("127.0.0.1", "localhost")}/`;
  folder = mkdtempSync(join(tmpdir(), "llm-pull-"));
  sidecar = await startTestSidecar({ model: modelPath("demo"), modelsDir: folder, contextSize: 512 });
}, 90_000);
afterAll(async () => {
  await sidecar?.stop();
  for (const server of [files, hub]) await new Promise<void>((resolve) => server.close(() => resolve()));
  if (savedEndpoint === undefined) delete process.env["HF_ENDPOINT"];
  else process.env["HF_ENDPOINT"] = savedEndpoint;
  rmSync(folder, { recursive: true, force: true });
});

const client = (host: string, key: string) => new Ollama({ host, headers: { Authorization: `Bearer ${key}` } });

async function refusal(promise: Promise<unknown>): Promise<{ status: number; message: string }> {
  const error = (await promise.then(
    () => new Error("expected a refusal"),
    (e: unknown) => e,
  )) as { status_code?: number; error?: string; message: string };
  return { status: error.status_code ?? 0, message: error.error ?? error.message };
}

const reply = async (ollama: Ollama, model: string) =>
  (await ollama.chat({ model, messages: [{ role: "user", content: "Hello" }], options: { temperature: 0 } })).message
    .content;

describeOnRuntimes(
  "Ollama's pull and delete",
  () => [sidecar.url],
  (edge) => {
    const admin = () => client(edge().url, ADMIN_KEY);
    const user = () => client(edge().url, CLIENT_KEY);
    const fileName = () => `pulled-${edge().runtime}`;
    const address = () => `${base}/files/${fileName()}.gguf`;

    it("a client key may not pull by address: 403 in Ollama's shape, nothing downloaded", async () => {
      expect(await refusal(user().pull({ model: address() }))).toEqual({
        status: 403,
        message: "This operation needs an admin key (one of ADMIN_KEYS, sent as 'Authorization: Bearer <key>').",
      });
      expect(existsSync(join(folder, `${fileName()}.gguf`))).toBe(false);
      expect((await user().list()).models.map((m) => m.name)).not.toContain(`${fileName()}:latest`);
    });

    it("an admin pulls a URL: progress to the whole file, then the model answers by name and address", async () => {
      const lines: ProgressResponse[] = [];
      for await (const line of await admin().pull({ model: address(), stream: true })) lines.push(line);
      const statuses = lines.map((l) => l.status);
      expect(statuses[0]).toBe("pulling manifest");
      expect(statuses.at(-1)).toBe("success");
      const steps = lines.slice(1, -1);
      expect(steps.length).toBeGreaterThanOrEqual(2);
      expect(new Set(steps.map((s) => s.status))).toEqual(new Set([`pulling ${address()}`]));
      const done = steps.map((s) => s.completed);
      expect(done).toEqual([...done].sort((a, b) => a - b));
      expect(steps.at(-1)).toMatchObject({ total: DEMO.length, completed: DEMO.length });
      expect(sha(readFileSync(join(folder, `${fileName()}.gguf`)))).toBe(sha(DEMO));
      const listed = (await user().list()).models.find((m) => m.name === `${fileName()}:latest`);
      expect(listed?.size).toBe(DEMO.length);
      expect(await reply(user(), fileName())).toBe("Hi there");
      expect(await reply(user(), address())).toBe("Hi there");
    });

    it("/api/show gives the pulled file's GGUF header; long arrays only when verbose", async () => {
      const shown = await user().show({ model: fileName() });
      expect(shown.model_info).toMatchObject({
        "general.architecture": "llama",
        "general.name": "demo",
        "llama.context_length": 131072,
        "llama.embedding_length": 16,
        "llama.attention.head_count": 1,
        "tokenizer.ggml.tokens": null,
      });
      expect(shown.details).toMatchObject({ format: "gguf", family: "llama", quantization_level: "F32" });
      // `verbose` is Ollama's field, which the npm client's types lack.
      const verbose = await fetch(`${edge().url}/api/show`, {
        method: "POST",
        headers: { Authorization: `Bearer ${CLIENT_KEY}` },
        body: JSON.stringify({ model: fileName(), verbose: true }),
      });
      const info = ((await verbose.json()) as { model_info: Record<string, unknown[]> }).model_info;
      expect(info["tokenizer.ggml.tokens"]).toHaveLength(285);
    });

    it("hf.co/<user>/<repo>:<quant>, unstreamed: the manifest's file, reached by the address", async () => {
      const model = "hf.co/someone/tiny-GGUF:Q8_0";
      // The second runtime's pull finds it catalogued by the first (and loads it).
      expect(await admin().pull({ model, stream: false })).toEqual({ status: "success" });
      expect(await reply(user(), model)).toBe("Hi there");
      expect(readdirSync(folder).some((f) => f.endsWith(".gguf") && f.includes("tiny"))).toBe(true);
    });

    it("refusals: an unknown name 404, a missing file the download's failure, a start-up path kept", async () => {
      expect(await refusal(admin().pull({ model: "no-such-model" }))).toMatchObject({ status: 404 });
      const missing = await refusal(admin().pull({ model: `${base}/files/missing.gguf` }));
      expect(missing.status).toBe(400);
      expect(missing.message).toContain("the download of");
      const kept = await refusal(admin().delete({ model: "demo" }));
      expect(kept).toEqual({
        status: 400,
        message: 'model "demo" has no file in the models folder: only those are deleted',
      });
      expect(await reply(user(), "demo")).toBe("Hi there");
    });

    it("delete: a client key is refused; an admin's removes the file and the model (then a 404)", async () => {
      expect(await refusal(user().delete({ model: fileName() }))).toMatchObject({ status: 403 });
      expect(await admin().delete({ model: fileName() })).toEqual({ status: "success" });
      expect(existsSync(join(folder, `${fileName()}.gguf`))).toBe(false);
      expect((await user().list()).models.map((m) => m.name)).not.toContain(`${fileName()}:latest`);
      expect(await refusal(reply(user(), fileName()))).toMatchObject({ status: 404 });
    });
  },
  { apiKeys: CLIENT_KEY, adminKeys: ADMIN_KEY },
);

describe("a pull through an edge in front of two sidecars", () => {
  let second: RunningSidecar;
  let secondFolder = "";
  let edge: RuntimeEdge;
  beforeAll(async () => {
    secondFolder = mkdtempSync(join(tmpdir(), "llm-pull-second-"));
    second = await startTestSidecar({ model: modelPath("demo"), modelsDir: secondFolder, contextSize: 512 });
    edge = await startEdgeOn("node", [sidecar.url, second.url], { adminKeys: ADMIN_KEY });
  }, 90_000);
  afterAll(async () => {
    await edge?.stop();
    await second?.stop();
    rmSync(secondFolder, { recursive: true, force: true });
  });

  it("downloads on both at once, seen as one pull (bytes summed); the delete removes both files", async () => {
    const lines: ProgressResponse[] = [];
    for await (const line of await client(edge.url, ADMIN_KEY).pull({ model: `${base}/files/both.gguf`, stream: true }))
      lines.push(line);
    expect(lines.at(-2)).toMatchObject({ total: 2 * DEMO.length, completed: 2 * DEMO.length });
    for (const dir of [folder, secondFolder]) expect(sha(readFileSync(join(dir, "both.gguf")))).toBe(sha(DEMO));
    expect(await reply(client(edge.url, ADMIN_KEY), "both")).toBe("Hi there");
    await client(edge.url, ADMIN_KEY).delete({ model: "both" });
    for (const dir of [folder, secondFolder]) expect(existsSync(join(dir, "both.gguf"))).toBe(false);
  });
});
