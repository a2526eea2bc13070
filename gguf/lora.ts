// LoRA adapters for scripted models: GGUF files of `general.type` `adapter` that llama.cpp applies
// to a scripted base model, so that a test knows exactly what the adapted model answers.
//
// A scripted model's output matrix puts a decisive logit on each dimension's successor (scripted.ts).
// An adapter here is one rank-1 pair on `output.weight`: `lora_a` reads the newline's dimension (0,
// which every chat prompt ends on), `lora_b` takes the base's successor's logit away and puts twice
// as much on another token, which starts one of the base's latent scripts. With the adapter (scale
// above 1/3) the reply is that script's; without it (or at scale 0), the base's.
import { SCRIPT_LOGIT, type ScriptedModel } from "./scripted.js";
import { escapeSpaces } from "./llama.js";
import { meta, type GgufFile } from "./writer.js";

export interface LoraSpec {
  readonly name: string;
  /** The piece the newline's successor becomes (a script's trigger in the base, e.g. "Ahoy"). */
  readonly opens: string;
}

/** The adapter's rank and alpha: llama.cpp scales B·A by scale × alpha / rank. */
const RANK = 1;

/** The adapter of `base` (a scripted model whose vocabulary holds `spec.opens`). */
export function buildLoraAdapter(base: ScriptedModel, spec: LoraSpec): GgufFile {
  const fail = (message: string): never => {
    throw new Error(`LoRA adapter "${spec.name}": ${message}`);
  };
  const d = base.shape.embedding;
  const n = base.vocab.length;
  const target = base.vocab.findIndex((e) => e.piece === escapeSpaces(spec.opens));
  if (target < 0) fail(`the base has no token ${JSON.stringify(spec.opens)}`);
  const chat = base.scripts.find((s) => s.trigger === "<0x0A>") ?? fail("the base has no script after a newline");
  const replaced = chat.tokenIds[0] ?? fail("the base's chat reply is empty");
  // The same factor as the base's output matrix: the final RMS norm scales a one-hot 1 to this.
  const weight = SCRIPT_LOGIT * Math.sqrt(1 / d + base.shape.rmsEpsilon);
  const a = new Float32Array(d * RANK);
  a[0] = 1;
  const b = new Float32Array(RANK * n);
  b[replaced] = -weight;
  b[target] = 2 * weight;
  return {
    metadata: [
      ["general.architecture", meta.str("llama")],
      ["general.type", meta.str("adapter")],
      ["general.name", meta.str(spec.name)],
      ["adapter.type", meta.str("lora")],
      ["adapter.lora.alpha", meta.f32(RANK)],
    ],
    tensors: [
      // ggml order: A is [d, rank] (rank rows of d), B is [rank, vocab].
      { name: "output.weight.lora_a", shape: [d, RANK], type: "F32", data: a },
      { name: "output.weight.lora_b", shape: [RANK, n], type: "F32", data: b },
    ],
  };
}
