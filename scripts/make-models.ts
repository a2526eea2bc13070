// Writes the project's GGUF models (missing or outdated ones only) and prints their paths.
// Usage: npx tsx scripts/make-models.ts [names...] [--dir models]
//        names: demo, scripted, tools, agent, random-tiny, random-60m, random-850m (~1.7 GB), gemma3-vision (and
//        its projector), …, or "all"; default: demo, scripted, tools and random-tiny.
import {
  CATALOGUE,
  DEFAULT_MODELS,
  ensureModels,
  isModelName,
  MODEL_NAMES,
  type ModelName,
  projectorPath,
} from "../gguf/models.js";

function parseArgs(argv: readonly string[]): { dir: string; names: ModelName[] } {
  let dir = "models";
  const names: ModelName[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--dir") {
      const value = argv[++i];
      if (value === undefined) throw new Error("--dir needs a directory");
      dir = value;
    } else if (arg.startsWith("--dir=")) dir = arg.slice("--dir=".length);
    else if (arg === "all") names.push(...MODEL_NAMES);
    else if (isModelName(arg)) names.push(arg);
    else throw new Error(`unknown model or option "${arg}"; models: ${MODEL_NAMES.join(", ")}, all`);
  }
  return { dir, names: names.length > 0 ? [...new Set(names)] : [...DEFAULT_MODELS] };
}

try {
  const { dir, names } = parseArgs(process.argv.slice(2));
  const start = performance.now();
  const paths = await ensureModels(dir, names);
  for (const name of names) {
    console.log(paths[name]);
    if ("projector" in CATALOGUE[name]) console.log(projectorPath(name, dir));
  }
  console.error(`models ready in ${Math.round(performance.now() - start)} ms`);
} catch (error) {
  console.error((error as Error).message);
  process.exitCode = 1;
}
