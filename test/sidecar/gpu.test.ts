// `--gpu` / `--gpu-layers` on the real engine (this host has no GPU): the model loads on the CPU
// when told so, and the report says so in ListModels and the start-up line.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeGpu } from "../../sidecar/engine/llama/gpu.js";
import type { LoadedModel } from "../../sidecar/engine/llama/model.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, startTestSidecar } from "../support/sidecar.js";

let sidecar: RunningSidecar;
let loaded: LoadedModel;
beforeAll(async () => {
  sidecar = await startTestSidecar({ sequences: 1, maxQueue: 1, gpu: false, gpuLayers: 0 });
  loaded = sidecar.models[0]!;
}, 60_000);
afterAll(() => sidecar?.stop());

describe("GPU report", () => {
  it("--gpu false: the CPU, no layers offloaded, every layer counted", async () => {
    const layers = loaded.model.fileInsights.totalLayers;
    expect(layers).toBeGreaterThan(0);
    expect(loaded.llama.gpu).toBe(false);
    expect(loaded.gpu).toEqual({ type: "", devices: [], vramBytes: 0, layersOffloaded: 0, layers });
    expect(describeGpu(loaded.gpu)).toBe(`no GPU (CPU only, ${layers} layers)`);
    const { models } = await clientsFor(sidecar.url).grpc.listModels({});
    expect(models?.[0]).toMatchObject({ gpu: "", gpuDevices: [], vramBytes: 0n, gpuLayers: 0, modelLayers: layers });
  });

  it("describes a GPU with its devices, memory and layers", () => {
    const report = { type: "cuda", devices: ["NVIDIA L4"], vramBytes: 24 * 2 ** 30, layersOffloaded: 20, layers: 33 };
    expect(describeGpu(report)).toBe("cuda on NVIDIA L4 (24.0 GiB VRAM), 20 of 33 layers offloaded");
  });
});
