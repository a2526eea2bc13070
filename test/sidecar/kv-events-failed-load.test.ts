// A model load that fails after its KV tier read its folder back (here: a projector that is not one) frees what it
// made and publishes no block: before, the tier's states stayed published as CPU blocks of a model that never loaded
// (and its context stayed in memory).
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { modelPath } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startCatalogue } from "../support/catalogue.js";
import { KvSubscriber } from "../support/kv-subscriber.js";
import { clientsFor, collect, promptOf } from "../support/sidecar.js";

const POD = "10.1.2.5:8080";
const MODEL = "random-60m";
let dir: string;
let subscriber: KvSubscriber;
let sidecar: RunningSidecar | undefined;

/** Two models: none loaded at start, so a failed load happens while the sidecar (and its publisher) runs. */
const start = (mmproj?: string) =>
  startCatalogue(
    [modelPath("random-tiny"), modelPath(MODEL)],
    {
      sequences: 1,
      contextSize: 1024,
      cacheRam: 16,
      cacheDir: path.join(dir, "states"),
      kvEvents: { endpoint: subscriber.endpoint, replay: "tcp://127.0.0.1:*", pod: POD, blockSize: 16 },
    },
    mmproj === undefined ? {} : { presets: { [MODEL]: { mmproj } } },
  );

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "kv-failed-load-"));
  subscriber = await KvSubscriber.bound("tcp://127.0.0.1:*");
});
afterAll(async () => {
  await subscriber?.close();
  await sidecar?.stop();
  await rm(dir, { recursive: true, force: true });
});

it("a load failing after the tier read its folder back leaves no block published", async () => {
  // States of two prompts saved in the folder (a sequence taken over, then the unload at stop).
  sidecar = await start();
  subscriber.replayEndpoint = sidecar.kvEvents?.replayEndpoint ?? "";
  for (const seed of [1, 2]) {
    const client = clientsFor(sidecar.url).grpc;
    await collect(
      client.generate({ model: MODEL, input: { case: "prompt", value: promptOf(seed) }, maxTokens: 4, sampling: {} }),
    );
  }
  await sidecar.stop();
  sidecar = undefined;

  const notProjector = path.join(dir, "mmproj-broken.gguf");
  await copyFile(modelPath("random-tiny"), notProjector);
  sidecar = await start(notProjector);
  subscriber.replayEndpoint = sidecar.kvEvents?.replayEndpoint ?? "";
  const client = clientsFor(sidecar.url).grpc;
  const failed = await collect(
    client.generate({ model: MODEL, input: { case: "prompt", value: promptOf(3) }, maxTokens: 4, sampling: {} }),
  ).catch((error: Error) => error);
  expect(String(failed)).toMatch(/projector could not be loaded/);
  await vi
    .waitUntil(() => subscriber.view(POD, MODEL).size === 0 && subscriber.batches > 0, {
      timeout: 10_000,
      interval: 25,
    })
    .catch(() => undefined);
  expect(subscriber.errors).toEqual([]);
  expect([...subscriber.view(POD, MODEL).keys()]).toEqual([]);
}, 120_000);
