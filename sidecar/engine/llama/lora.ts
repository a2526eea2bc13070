// LoRA adapters of a loaded model (docs/decisions.md, "LoRA adapters"): each one is served as a model of its own
// name in a context of its own on the base's weights (model.ts, adapterModel); here, what an adapter is and its scale,
// which POST /lora-adapters changes while it is loaded.
import type { LlamaContext, LlamaContextSequence } from "node-llama-cpp";
import { setLoraScale } from "./llama-internals.js";

/** An adapter to load with a model: its name (the model name requests use), its file and its default scale. */
export interface LoraAdapter {
  readonly name: string;
  readonly path: string;
  readonly scale: number;
}

/** An adapter applied to its own context: its scale now, changed in the context's turn. */
export class AppliedLora {
  #scale: number;
  #context: LlamaContext | undefined;
  /** Scale changes so far; a sequence's cells are of the change it was taken after. */
  #changes = 0;
  readonly #takenAt = new WeakMap<LlamaContextSequence, number>();

  constructor(
    readonly adapter: LoraAdapter,
    /** The base model's name. */
    readonly parent: string,
  ) {
    this.#scale = adapter.scale;
  }

  get name(): string {
    return this.adapter.name;
  }

  get path(): string {
    return this.adapter.path;
  }

  get scale(): number {
    return this.#scale;
  }

  attach(context: LlamaContext): void {
    this.#context = context;
  }

  /** Sets its scale for the decode steps after this one (0: the base model's replies). */
  async setScale(scale: number): Promise<void> {
    if (this.#context !== undefined) await setLoraScale(this.#context, this.adapter.path, scale);
    this.#scale = scale;
    this.#changes++;
  }

  /** A request takes `sequence`: the cells it computes from now on are of the scale now. */
  taken(sequence: LlamaContextSequence): void {
    this.#takenAt.set(sequence, this.#changes);
  }

  /** Whether the scale changed since a request took `sequence`: its cells mix scales, and are let go of. */
  stale(sequence: LlamaContextSequence): boolean {
    const at = this.#takenAt.get(sequence);
    return at !== undefined && at !== this.#changes;
  }
}
