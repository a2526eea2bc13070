// The model-server protocol's LoRA info gauge (vLLM's `vllm:lora_requests_info`), under this server's prefix:
// `sidecar_lora_requests_info{running_lora_adapters, waiting_lora_adapters, max_lora}` whose value is the scrape's
// Unix time, as an Inference Gateway's endpoint picker reads it (deploy/kubernetes/endpoint-picker.yaml, `loraSpec`).
import { Gauge, type Registry } from "prom-client";

/** The adapters with requests generating and waiting, and how many can serve at once. */
export interface LoraLoad {
  readonly running: readonly string[];
  readonly waiting: readonly string[];
  /** Adapters loaded now: each serves in a context of its own, so all of them at once. */
  readonly max: number;
}

export function loraInfoGauge(registry: Registry, read: () => LoraLoad): void {
  new Gauge({
    name: "sidecar_lora_requests_info",
    help:
      "LoRA adapters with requests generating (running_lora_adapters) and waiting (waiting_lora_adapters), " +
      "comma-separated, and how many adapters serve at once (max_lora); the value is the Unix time of the scrape.",
    labelNames: ["running_lora_adapters", "waiting_lora_adapters", "max_lora"],
    registers: [registry],
    collect() {
      const lora = read();
      this.reset();
      this.set(
        {
          running_lora_adapters: lora.running.join(","),
          waiting_lora_adapters: lora.waiting.join(","),
          max_lora: String(lora.max),
        },
        Math.floor(Date.now() / 1000),
      );
    },
  });
}
