// `--priority`: the nice value of the sidecar's main thread, which every decode step waits for.
import { getPriority, setPriority } from "node:os";

/** "auto" raises the priority when the host allows it; "off" leaves it; a number is a nice value. */
export type PrioritySetting = "auto" | "off" | number;

/** The nice value "auto" asks for. */
const AUTO_NICE = -5;

/**
 * Raises the scheduling priority of the sidecar's main thread (on Linux, a nice value is per
 * thread, and only threads this one starts later inherit it: the decoding threads run on libuv's
 * pool, started before, and ggml's workers are started from there, so they keep the process's
 * value, as `/proc/<pid>/task/<tid>/stat` shows). Every decode step waits for
 * the main thread (sampling, the next step's dispatch); on a host shared with the edge or
 * clients, a busy core delays that wake-up. Measured on 2 cores with the edge, the sidecar and a
 * client on one machine, one stream: 0.81× → 0.88× of in-process decode speed through the edge,
 * 0.89× → 0.92× over native gRPC. Lowering a nice value needs CAP_SYS_NICE (root): "auto" tries
 * and keeps the current priority otherwise. Returns the nice value in effect.
 */
export function applyPriority(setting: PrioritySetting): number {
  if (setting === "off") return getPriority();
  const nice = setting === "auto" ? AUTO_NICE : setting;
  try {
    setPriority(nice);
  } catch (error) {
    if (setting !== "auto") throw new Error(`cannot set the sidecar's priority to ${nice}: ${String(error)}`);
  }
  return getPriority();
}
