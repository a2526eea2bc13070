// Models by name and by address (sidecar/catalogue/model-source.ts, node-llama-cpp's own resolver): a
// "remote" model served by a local HTTP server — as an https-style URL and as an hf: URI through
// HF_ENDPOINT — is downloaded once into the models folder, byte for byte, and found there the next
// time without a request; a download that is interrupted resumes where it stopped (a Range request);
// a bare name is a file of the models folder; the sidecar process serves a model given by URL.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { isRemoteModel, modelsInFolder, resolveModelSource } from "../../sidecar/catalogue/model-source.js";
import { startSidecarProcess } from "../support/processes.js";

const source = readFileSync(modelPath("random-tiny"));
const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

let server: Server;
let base: string;
const requests: { method: string; url: string; range: string | undefined }[] = [];
/** Bytes sent before the connection is cut, for the next full-file request (0: not cut). */
let cutAfter = 0;

function serve(request: IncomingMessage, response: import("node:http").ServerResponse): void {
  requests.push({ method: request.method ?? "", url: request.url ?? "", range: request.headers.range });
  if (!new URL(request.url ?? "/", "http://x").pathname.endsWith(".gguf")) {
    response.writeHead(404).end();
    return;
  }
  const range = /^bytes=(\d+)-$/.exec(request.headers.range ?? "");
  const start = range ? Number(range[1]) : 0;
  const headers = { "content-type": "application/octet-stream", "accept-ranges": "bytes", etag: '"tiny"' };
  if (request.method === "HEAD") {
    response.writeHead(200, { ...headers, "content-length": source.length }).end();
    return;
  }
  const body = source.subarray(start);
  response.writeHead(range ? 206 : 200, {
    ...headers,
    "content-length": body.length,
    ...(range ? { "content-range": `bytes ${start}-${source.length - 1}/${source.length}` } : {}),
  });
  if (!range && cutAfter > 0) {
    const cut = cutAfter;
    cutAfter = 0;
    response.write(body.subarray(0, cut), () => response.destroy());
    return;
  }
  response.end(body);
}

beforeAll(async () => {
  server = createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("models by name and by address", () => {
  it("tells remote models from files", () => {
    expect(
      ["hf:user/repo/model.gguf", "hf:user/repo:Q4_K_M", "https://host/m.gguf", "http://127.0.0.1/m.gguf"].every(
        isRemoteModel,
      ),
    ).toBe(true);
    expect(["models/demo.gguf", "demo", "/abs/m.gguf"].some(isRemoteModel)).toBe(false);
  });

  it("downloads a model by URL once, byte for byte, and finds it there the next time", async () => {
    const folder = mkdtempSync(join(tmpdir(), "models-"));
    const url = `${base}/files/tiny-model.gguf`;
    const progress: number[] = [];
    const first = await resolveModelSource(url, { folder, onDownload: (done) => progress.push(done) });
    expect(sha(readFileSync(first))).toBe(sha(source));
    expect(progress.at(-1)).toBe(source.length);
    const before = requests.length;
    expect(await resolveModelSource(url, { folder })).toBe(first);
    // Found by its name: the server is not asked again.
    expect(requests.slice(before)).toEqual([]);
    expect(modelsInFolder(folder).length).toBe(1);
  });

  it("resumes an interrupted download with a Range request", async () => {
    const folder = mkdtempSync(join(tmpdir(), "models-"));
    const url = `${base}/files/resumed.gguf`;
    cutAfter = Math.floor(source.length / 2);
    const cut = await resolveModelSource(url, { folder }).then(
      () => "completed",
      () => "failed",
    );
    const before = requests.length;
    const path = cut === "completed" ? join(folder, "resumed.gguf") : await resolveModelSource(url, { folder });
    expect(sha(readFileSync(path))).toBe(sha(source));
    if (cut === "failed")
      expect(requests.slice(before).some((r) => r.range !== undefined && r.range !== "bytes=0-")).toBe(true);
    else
      expect(
        requests.some((r) => r.url.endsWith("resumed.gguf") && r.range !== undefined && r.range !== "bytes=0-"),
      ).toBe(true);
  });

  it("resolves an hf: URI through HF_ENDPOINT", async () => {
    const folder = mkdtempSync(join(tmpdir(), "models-"));
    const saved = process.env["HF_ENDPOINT"];
    process.env["HF_ENDPOINT"] = `${base}/`;
    try {
      const path = await resolveModelSource("hf:someone/tiny-GGUF/tiny.gguf", { folder });
      expect(sha(readFileSync(path))).toBe(sha(source));
      expect(requests.some((r) => r.url.includes("/someone/tiny-GGUF/resolve/main/tiny.gguf"))).toBe(true);
    } finally {
      if (saved === undefined) delete process.env["HF_ENDPOINT"];
      else process.env["HF_ENDPOINT"] = saved;
    }
  });

  it("takes a bare name from the models folder, and a path as it is", async () => {
    const folder = join(modelPath("demo"), "..");
    expect(await resolveModelSource("demo", { folder })).toBe(join(folder, "demo.gguf"));
    expect(await resolveModelSource("elsewhere/x.gguf", { folder })).toBe("elsewhere/x.gguf");
    expect(modelsInFolder(folder)).toContain("demo");
  });

  it("the sidecar serves a model given by URL, downloaded into --models-dir", async () => {
    const folder = mkdtempSync(join(tmpdir(), "models-"));
    const sidecar = await startSidecarProcess(`${base}/files/served.gguf`, [
      "--models-dir",
      folder,
      "--context-size",
      "256",
      "--sequences",
      "1",
    ]);
    try {
      expect(sidecar.output()).toContain(`sidecar: ${base}/files/served.gguf is ${join(folder, "served.gguf")}`);
      expect(statSync(join(folder, "served.gguf")).size).toBe(source.length);
    } finally {
      process.kill(-(sidecar.child.pid ?? 0), "SIGTERM");
    }
  }, 60_000);
});
