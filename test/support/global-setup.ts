import { ensureModels } from "../../gguf/models.js";

/** Writes the test models once per run (a no-op when they are up to date). */
export default async function setup(): Promise<void> {
  await ensureModels("models", ["demo", "scripted", "tools", "random-tiny", "rerank", "random-60m"]);
}
