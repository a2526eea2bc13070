// A child process for test/sidecar/decode-thread.test.ts: loads the 60M test model on two threads, generates, and
// then, by its argument, leaves the process to end by itself ("leave": nothing disposed, the context's decode thread
// still there when Node tears down) or unloads the model while a generation is under way ("unload"). Prints one line
// of JSON: the tokens the generation gave and how it ended.
import { create } from "@bufbuild/protobuf";
import { GenerateRequestSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { generate } from "../../sidecar/engine/decode/generate.js";
import { EngineMetrics } from "../../sidecar/engine/engine-metrics.js";
import type { LoadedModel } from "../../sidecar/engine/llama/model.js";
import { loadRandom } from "./engine.js";

async function tokens(loaded: LoadedModel, maxTokens: number, onToken?: (count: number) => void): Promise<string> {
  const request = create(GenerateRequestSchema, {
    input: { case: "prompt", value: "The lighthouse keeper wrote" },
    maxTokens,
    sampling: { temperature: 0 },
  });
  let count = 0;
  try {
    for await (const { event } of generate(loaded, request, new AbortController().signal, new EngineMetrics())) {
      if (event?.case === "token") onToken?.(++count);
    }
    return `${count} tokens`;
  } catch (error) {
    return `${count} tokens, then ${error instanceof Error ? error.constructor.name : "a throw"}`;
  }
}

const mode = process.argv[2];
const loaded = await loadRandom();
let unloaded: Promise<void> | undefined;
const generated = await tokens(loaded, 200, (count) => {
  if (mode === "unload" && count === 8) unloaded ??= loaded.dispose();
});
await unloaded;
console.log(JSON.stringify({ generated }));
