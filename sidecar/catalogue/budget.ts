// What may stay loaded: `--models-max` and the memory budget decide whether a model may load now,
// which idle models go first (least recently used), or whether the load waits for a busy one.
// Pure functions over the numbers they are given (docs/decisions.md, "Many models on one sidecar").

/** Host memory and GPU memory, in bytes. */
export interface Bytes {
  readonly ram: number;
  readonly vram: number;
}

export const NO_BYTES: Bytes = { ram: 0, vram: 0 };

/** A model loaded or loading, as the budget sees it. */
export interface Resident {
  readonly name: string;
  /** What it takes: weights and contexts (node-llama-cpp's estimate). */
  readonly need: Bytes;
  /**
   * The part of `need` that free memory does not show: a loaded model's memory-mapped weights (the
   * kernel counts their pages as reclaimable cache), a loading model's whole need.
   */
  readonly hidden: Bytes;
  /** Only an idle model (loaded, no request using it) may be unloaded. */
  readonly state: "idle" | "busy" | "loading";
  /** When it was last used: lower is longer ago. */
  readonly lastUsed: number;
}

export interface BudgetInput {
  readonly candidate: { readonly name: string; readonly need: Bytes };
  /** Every other model loaded or loading. */
  readonly residents: readonly Resident[];
  /** Free memory now (RAM: what the kernel can hand out, page cache included). */
  readonly free: Bytes;
  readonly total: Bytes;
  /** `--models-max`. */
  readonly maxModels: number;
  /** Memory held outside the catalogue that free memory does not show (the embedding model's weights). */
  readonly reserved?: Bytes;
}

export type BudgetDecision =
  | { readonly action: "load"; readonly unload: readonly string[] }
  | { readonly action: "wait"; readonly reason: string }
  | { readonly action: "refuse"; readonly reason: string };

const MIB = 2 ** 20;
const MIN_MARGIN = 512 * MIB;
const DIMENSIONS = [
  ["ram", "memory"],
  ["vram", "GPU memory"],
] as const;

/** Memory kept free: max(512 MiB, 5% of the total); none where there is none (no GPU). */
export function marginOf(total: number): number {
  return total <= 0 ? 0 : Math.max(MIN_MARGIN, Math.round(total * 0.05));
}

const sum = (values: readonly number[]): number => values.reduce((total, v) => total + v, 0);
const mib = (bytes: number): string => `${Math.round(bytes / MIB)} MiB`;

/** Room left for a new model: free memory, less what free memory does not show, less the margin. */
export function freeRoom(free: Bytes, total: Bytes, residents: readonly Resident[], reserved: Bytes = NO_BYTES): Bytes {
  const room = (dimension: keyof Bytes): number =>
    free[dimension] - sum(residents.map((r) => r.hidden[dimension])) - reserved[dimension] - marginOf(total[dimension]);
  return { ram: room("ram"), vram: room("vram") };
}

function roomOf(input: BudgetInput, dimension: keyof Bytes): number {
  return freeRoom(input.free, input.total, input.residents, input.reserved)[dimension];
}

/** Why the candidate can never load, even with every other model unloaded; undefined when it can. */
function tooBig(input: BudgetInput): string | undefined {
  for (const [dimension, label] of DIMENSIONS) {
    const need = input.candidate.need[dimension];
    const most = roomOf(input, dimension) + sum(input.residents.map((r) => r.need[dimension]));
    if (need > 0 && need > most) {
      const margin = mib(marginOf(input.total[dimension]));
      const holds = mib(Math.max(0, most));
      return (
        `it needs ${mib(need)} of ${label}; the budget holds ${holds} with every other model unloaded (free ` +
        `${label} less a margin of ${margin})`
      );
    }
  }
  return undefined;
}

/** Whether the candidate fits once `victims` are unloaded, in count and in every dimension. */
function fitsWithout(input: BudgetInput, victims: readonly Resident[]): boolean {
  if (input.residents.length - victims.length + 1 > input.maxModels) return false;
  return DIMENSIONS.every(([dimension]) => {
    const need = input.candidate.need[dimension];
    return need <= 0 || need <= roomOf(input, dimension) + sum(victims.map((v) => v.need[dimension]));
  });
}

/**
 * May the candidate load now? "load" with the idle models to unload first (least recently used
 * first, no more than needed), "wait" when room can only come from a model in use or loading, or
 * "refuse" when it does not fit even with every other model unloaded.
 */
export function decide(input: BudgetInput): BudgetDecision {
  const big = tooBig(input);
  if (big !== undefined) return { action: "refuse", reason: big };
  const idle = input.residents.filter((r) => r.state === "idle").sort((a, b) => a.lastUsed - b.lastUsed);
  const victims: Resident[] = [];
  while (!fitsWithout(input, victims)) {
    const next = idle[victims.length];
    if (next === undefined) {
      const full = input.residents.length + 1 > input.maxModels;
      const why = full ? `${input.maxModels} models are loaded (--models-max)` : "the memory budget is full";
      return { action: "wait", reason: `${why} and the models that would make room are in use or loading` };
    }
    victims.push(next);
  }
  return { action: "load", unload: victims.map((v) => v.name) };
}
