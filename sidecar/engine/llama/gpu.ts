// The GPU a model runs on: `--gpu` (which llama.cpp backend, checked against what this host can
// load before anything else happens) and `--gpu-layers` (how many layers go to it), and what was
// chosen, for the start-up log, ListModels and /v1/info.
import { getLlamaGpuTypes, type Llama, type LlamaGpuType, type LlamaModel } from "node-llama-cpp";

export type GpuChoice = "auto" | Exclude<LlamaGpuType, false> | false;
const GPU_CHOICES = ["auto", "cuda", "vulkan", "metal", "false"] as const;
export type GpuLayers = "auto" | "max" | number;

/** The `--gpu` flag's text as a choice; "false", "off", "cpu" and "none" all mean no GPU. */
export function parseGpu(raw: string): GpuChoice {
  if (["false", "off", "cpu", "none"].includes(raw)) return false;
  if (raw === "auto" || raw === "cuda" || raw === "vulkan" || raw === "metal") return raw;
  throw new Error(`--gpu must be one of ${GPU_CHOICES.join(", ")}, got "${raw}"`);
}

/** The `--gpu-layers` flag's text: auto, max or a count of layers. */
export function parseGpuLayers(raw: string): GpuLayers {
  if (raw === "auto" || raw === "max") return raw;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`--gpu-layers must be auto, max or a number of layers (0 or more), got "${raw}"`);
  return n;
}

/** Refuses a GPU backend this host cannot load, naming the ones it can (CPU is always one). */
export async function checkGpuAvailable(gpu: GpuChoice): Promise<void> {
  if (gpu === "auto" || gpu === false) return;
  const supported = await getLlamaGpuTypes("supported");
  if (supported.includes(gpu)) return;
  const names = supported.map((t) => (t === false ? "false (CPU)" : t));
  throw new Error(
    `--gpu ${gpu}: not available on this host (its libraries or drivers are missing); available here: ` +
      `${names.join(", ")}`,
  );
}

export interface GpuReport {
  /** The backend in use ("cuda", "vulkan", "metal"), or "" on the CPU. */
  readonly type: string;
  readonly devices: readonly string[];
  /** The GPU memory there is, in bytes (0 on the CPU). */
  readonly vramBytes: number;
  /** Layers of the model on the GPU. */
  readonly layersOffloaded: number;
  /** Layers of the model in all. */
  readonly layers: number;
}

export async function gpuReport(llama: Llama, model: LlamaModel): Promise<GpuReport> {
  const layers = model.fileInsights.totalLayers;
  if (llama.gpu === false) return { type: "", devices: [], vramBytes: 0, layersOffloaded: 0, layers };
  const [devices, vram] = await Promise.all([llama.getGpuDeviceNames(), llama.getVramState()]);
  return { type: llama.gpu, devices, vramBytes: vram.total, layersOffloaded: model.gpuLayers, layers };
}

/** One line for the start-up log and the benchmark's header. */
export function describeGpu(report: GpuReport): string {
  if (report.type === "") return `no GPU (CPU only, ${report.layers} layers)`;
  const vram = `${(report.vramBytes / 2 ** 30).toFixed(1)} GiB VRAM`;
  return (
    `${report.type} on ${report.devices.join(", ") || "an unnamed device"} (${vram}), ${report.layersOffloaded} ` +
    `of ${report.layers} layers offloaded`
  );
}
