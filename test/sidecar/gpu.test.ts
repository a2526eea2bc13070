// `--gpu` / `--gpu-layers` on the real engine (this host has no GPU): the model loads on the CPU
// when told so, and the report says so in ListModels and the start-up line.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { describeGpu } from "../../sidecar/engine/llama/gpu.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";
import { createInferenceService } from "../../sidecar/service.js";
import { EngineMetrics } from "../../sidecar/engine/metrics.js";
import { ResumableStreams } from "../../sidecar/engine/streams/resumable-streams.js";

let loaded: LoadedModel;
beforeAll(async () => {
  loaded = await loadModel({
    modelPath: modelPath("scripted"),
    threads: 1,
    engine: "auto",
    sequences: 1,
    contextSize: 256,
    maxQueue: 1,
    queueTimeoutMs: 10_000,
    gpu: false,
    gpuLayers: 0,
  });
}, 60_000);
afterAll(() => loaded?.dispose());

describe("GPU report", () => {
  it("--gpu false: the CPU, no layers offloaded, every layer counted", async () => {
    const layers = loaded.model.fileInsights.totalLayers;
    expect(layers).toBeGreaterThan(0);
    expect(loaded.llama.gpu).toBe(false);
    expect(loaded.gpu).toEqual({ type: "", devices: [], vramBytes: 0, layersOffloaded: 0, layers });
    expect(describeGpu(loaded.gpu)).toBe(`no GPU (CPU only, ${layers} layers)`);
    const service = createInferenceService({
      models: [loaded],
      metrics: new EngineMetrics(),
      draining: () => false,
      heartbeatMs: 0,
      streams: new ResumableStreams(),
    });
    const { models } = await service.listModels!({} as never, {} as never);
    expect(models?.[0]).toMatchObject({ gpu: "", gpuDevices: [], vramBytes: 0n, gpuLayers: 0, modelLayers: layers });
  });

  it("describes a GPU with its devices, memory and layers", () => {
    const report = { type: "cuda", devices: ["NVIDIA L4"], vramBytes: 24 * 2 ** 30, layersOffloaded: 20, layers: 33 };
    expect(describeGpu(report)).toBe("cuda on NVIDIA L4 (24.0 GiB VRAM), 20 of 33 layers offloaded");
  });
});
