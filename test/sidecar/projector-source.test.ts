// A vision model by its Hugging Face address brings its projector (sidecar/catalogue/model-source.ts): the
// repository's manifest (`/v2/<user>/<repo>/manifests/<quant>`, served here by a local "hub" through HF_ENDPOINT)
// names the model's file and its projector's; the projector is downloaded beside the model as `mmproj-<model>.gguf`,
// once, and the sidecar started with only the address reads images. A manifest without a projector brings none.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureModels, projectorPath } from "../../gguf/models.js";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { fetchProjectorOf, resolveModelSource } from "../../sidecar/catalogue/model-source.js";
import { loadLlama } from "../../sidecar/engine/llama/model.js";
import { projectorSupport } from "../../sidecar/engine/llama/multimodal.js";
import { RED, solidPng } from "../support/images.js";
import { startSidecarProcess } from "../support/processes.js";
import { VISION_RED } from "../support/scripted.js";
import { clientsFor, collect, replyText } from "../support/sidecar.js";

const support = projectorSupport(await loadLlama("auto"));
const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

let hub: Server;
let files: Record<string, Buffer>;
const asked: string[] = [];
const MANIFESTS: Record<string, object> = {
  "/v2/someone/vision-GGUF/manifests/Q8_0": {
    ggufFile: { rfilename: "vision-Q8_0.gguf" },
    mmprojFile: { rfilename: "mmproj-vision-F16.gguf" },
  },
  "/v2/someone/text-GGUF/manifests/Q8_0": { ggufFile: { rfilename: "text-Q8_0.gguf" } },
};

function serve(request: IncomingMessage, response: ServerResponse): void {
  const path = new URL(request.url ?? "/", "http://x").pathname;
  asked.push(path);
  const manifest = MANIFESTS[path];
  if (manifest !== undefined) {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(manifest));
    return;
  }
  const body = files[path.split("/").at(-1) ?? ""];
  if (body === undefined || !path.includes("/resolve/main/")) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
  response.end(request.method === "HEAD" ? undefined : body);
}

const savedEndpoint = process.env["HF_ENDPOINT"];
beforeAll(async () => {
  const { "gemma3-vision": vision, demo } = await ensureModels("models", ["gemma3-vision", "demo"]);
  files = {
    "vision-Q8_0.gguf": readFileSync(vision),
    "mmproj-vision-F16.gguf": readFileSync(projectorPath("gemma3-vision")),
    "text-Q8_0.gguf": readFileSync(demo),
  };
  hub = createServer(serve);
  await new Promise<void>((resolve) => hub.listen(0, "127.0.0.1", resolve));
  // node-llama-cpp reads an address on HF_ENDPOINT's host as a Hugging Face one: the hub is `localhost`.
  process.env["HF_ENDPOINT"] = `http://localhost:${(hub.address() as AddressInfo).port}/`;
}, 120_000);
afterAll(async () => {
  if (savedEndpoint === undefined) delete process.env["HF_ENDPOINT"];
  else process.env["HF_ENDPOINT"] = savedEndpoint;
  await new Promise<void>((resolve) => hub.close(() => resolve()));
});

describe("a model by hf: address brings the projector its manifest names", () => {
  it("downloads it beside the model as mmproj-<model>.gguf, once; none when the manifest names none", async () => {
    const folder = mkdtempSync(join(tmpdir(), "models-"));
    const model = await resolveModelSource("hf:someone/vision-GGUF:Q8_0", { folder });
    const projector = await fetchProjectorOf("hf:someone/vision-GGUF:Q8_0", model, { folder });
    expect(projector).toBe(
      join(
        folder,
        `mmproj-${model
          .split("/")
          .at(-1)
          ?.replace(/\.gguf$/, "")}.gguf`,
      ),
    );
    expect(sha(readFileSync(projector ?? ""))).toBe(sha(files["mmproj-vision-F16.gguf"] ?? Buffer.alloc(0)));
    const before = asked.length;
    expect(await fetchProjectorOf("hf:someone/vision-GGUF:Q8_0", model, { folder })).toBe(projector);
    expect(asked.slice(before)).toEqual([]);
    const text = await resolveModelSource("hf:someone/text-GGUF:Q8_0", { folder });
    expect(await fetchProjectorOf("hf:someone/text-GGUF:Q8_0", text, { folder })).toBeUndefined();
    // An address naming its file, or a path, asks no manifest (a projector beside it is still found at load).
    expect(await fetchProjectorOf("hf:someone/vision-GGUF/vision-Q8_0.gguf", model, { folder })).toBeUndefined();
    expect(await fetchProjectorOf(model, model, { folder })).toBeUndefined();
  });

  it.skipIf(!support.available)(
    "the sidecar given only the address reads an image",
    async () => {
      const folder = mkdtempSync(join(tmpdir(), "models-"));
      const sidecar = await startSidecarProcess("hf:someone/vision-GGUF:Q8_0", [
        ...["--models-dir", folder, "--context-size", "1024", "--sequences", "1", "--threads", "2"],
      ]);
      try {
        const events = await collect(
          clientsFor(sidecar.url).grpc.generate({
            input: {
              case: "chat",
              value: {
                messages: [
                  {
                    role: Role.USER,
                    parts: [
                      { part: { case: "text", value: "Which colour is this?" } },
                      { part: { case: "media", value: { data: await solidPng(RED), mimeType: "image/png" } } },
                    ],
                  },
                ],
              },
            },
            sampling: { temperature: 0 },
            maxTokens: 32,
          }),
        );
        expect(replyText(events)).toBe(VISION_RED);
      } finally {
        process.kill(-(sidecar.child.pid ?? 0), "SIGTERM");
      }
    },
    120_000,
  );
});
