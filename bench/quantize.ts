// A catalogue model quantized as users serve it: `name:TYPE` (e.g. `random-850m:Q8_0`, the tag form
// Ollama's model names use) is the model of gguf/models.ts run through llama-quantize of the
// default peer build (`npm run bench:peer-build -- --variant default` builds it beside
// llama-server), written once into `.cache/quantized/` and again only when its source changed.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { PEER_DIR, peerPaths } from "./peer-paths.js";

/** The types the bench quantizes to: llama-quantize's names. */
export const QUANT_TYPES = ["Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0"] as const;

/** `name:TYPE` split, or undefined when `model` names no quantization. */
export function parseQuantized(model: string): { name: string; type: string } | undefined {
  const at = model.lastIndexOf(":");
  if (at <= 0) return undefined;
  const type = model.slice(at + 1).toUpperCase();
  if (!(QUANT_TYPES as readonly string[]).includes(type))
    throw new Error(`"${model}": quantization "${type}" is none of ${QUANT_TYPES.join(", ")}`);
  return { name: model.slice(0, at), type };
}

/** The file of `source` quantized to `type`, made now if it is missing or older than `source`. */
export function quantized(source: string, name: string, type: string, log: (message: string) => void): string {
  const binary = join(peerPaths("default").build, "bin/llama-quantize");
  if (!existsSync(binary))
    throw new Error(`${type}: no llama-quantize (npm run bench:peer-build -- --variant default)`);
  const dir = join(PEER_DIR, "..", "quantized");
  const target = join(dir, `${name}-${type}.gguf`);
  if (existsSync(target) && statSync(target).mtimeMs >= statSync(source).mtimeMs) return target;
  mkdirSync(dir, { recursive: true });
  log(`quantizing ${name} to ${type} (llama-quantize, 2 threads)`);
  const partial = `${target}.partial`;
  execFileSync(binary, [source, partial, type, "2"], { stdio: ["ignore", "ignore", "inherit"] });
  renameSync(partial, target);
  return target;
}
