// PullModel through a pool: every sidecar up downloads the model into its own models folder at the same time, and
// the caller sees one pull, their bytes summed; the last step carries the model as the merged list shows it. One
// sidecar failing stops the others' pulls and is the pull's failure.
import type { CallOptions } from "@connectrpc/connect";
import type { ModelInfo, PullProgress } from "../../proto/gen/inference/v1/inference_pb.js";
import { ServiceUnavailableError } from "../base/errors.js";
import { mergeCatalogues } from "./catalogue.js";
import type { Sidecar } from "./connection.js";
import type { SidecarPool } from "./pool.js";

type Step = Pick<PullProgress, "totalBytes" | "completedBytes">;

const sum = (steps: readonly Step[]) => ({
  totalBytes: steps.reduce((n, s) => n + s.totalBytes, 0n),
  completedBytes: steps.reduce((n, s) => n + s.completedBytes, 0n),
});

export async function* pullEverywhere(
  pool: SidecarPool,
  request: Parameters<Sidecar["pullModel"]>[0],
  options?: CallOptions,
): AsyncGenerator<PullProgress> {
  await pool.refresh();
  const states = pool.states.filter((s) => !s.down);
  if (states.length === 0) throw new ServiceUnavailableError("No inference sidecar is reachable to pull the model.");
  const stop = new AbortController();
  const signal = options?.signal === undefined ? stop.signal : AbortSignal.any([options.signal, stop.signal]);
  const steps: Step[] = states.map(() => ({ totalBytes: 0n, completedBytes: 0n }));
  const models: ModelInfo[] = [];
  let [pending, changed, failure] = [states.length, false, undefined as unknown];
  let wake = (): void => undefined;
  const note = (): void => {
    changed = true;
    wake();
  };
  const runs = states.map(async (state, i) => {
    try {
      for await (const step of state.client.pullModel(request, { ...options, signal })) {
        steps[i] = step;
        if (step.model !== undefined) state.added(step.model), models.push(step.model);
        note();
      }
    } catch (error) {
      failure ??= error;
      stop.abort();
    } finally {
      pending--;
      note();
    }
  });
  try {
    while (pending > 0) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (changed) resolve();
      });
      changed = false;
      if (failure !== undefined) throw failure;
      if (pending > 0) yield { $typeName: "inference.v1.PullProgress", ...sum(steps) };
    }
    await Promise.all(runs);
    if (failure !== undefined) throw failure;
    const [model] = mergeCatalogues(models.map((m) => [m]));
    yield { $typeName: "inference.v1.PullProgress", ...sum(steps), ...(model ? { model } : {}) };
  } finally {
    stop.abort();
  }
}
