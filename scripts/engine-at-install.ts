/**
 * `npm ci` / `npm install` (the root package's postinstall): builds the faster llama.cpp engine
 * (`npm run build:engine`, the thread-pool patch of sidecar/native/) when this host would run on
 * the prebuilt CPU library, so that a newcomer's `npm ci && npm start` gets it with no other
 * command (docs/decisions.md, "The fast engine at install"). Never fails the install: a host
 * that cannot build says why in one line and keeps the prebuilt library.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { getLlamaGpuTypes } from "node-llama-cpp";
import { loadLlama } from "../sidecar/engine/llama/model.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const say = (line: string): void => console.error(`engine: ${line}`);

/** Why this host keeps the prebuilt library, or undefined when it should build. */
async function reasonToSkip(): Promise<string | undefined> {
  const asked = process.env["ENGINE"]?.trim().toLowerCase();
  if (asked === "prebuilt") return "ENGINE=prebuilt: the prebuilt library stays";
  if (process.platform === "win32")
    return "Windows: `npm run build:engine` is not supported there; the prebuilt library stays";
  const gpus = (await getLlamaGpuTypes("supported")).filter((type) => type !== false);
  if (gpus.length > 0)
    return `a GPU backend is available (${gpus.join(", ")}): its prebuilt library serves better than a CPU build`;
  const missing = ["cmake", "c++", "make"].filter(
    (tool) => spawnSync(tool, ["--version"], { stdio: "ignore" }).status !== 0,
  );
  if (missing.length > 0)
    return (
      `no ${missing.join(", ")} on this host: the prebuilt library stays (install them, then \`npm run ` +
      `build:engine\`)`
    );
  const llama = await loadLlama("auto", false);
  const built = llama.buildType === "localBuild";
  await llama.dispose();
  return built ? "the local build is already there" : undefined;
}

async function main(): Promise<void> {
  const skip = await reasonToSkip();
  if (skip !== undefined) {
    say(skip);
    return;
  }
  say(`building llama.cpp for this CPU host (about 5 minutes on 2 cores; ENGINE=prebuilt npm ci skips it)`);
  const build = spawnSync(
    "nice",
    ["-n", "10", process.execPath, "--import", "tsx", path.join(root, "scripts/build-engine.ts")],
    {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
  if (build.status === 0) say("the local build is ready: the sidecar loads it (its start line says localBuild)");
  else
    say(
      `the build failed (exit ${build.status ?? build.signal}); the sidecar keeps the prebuilt library. \`npm run ` +
        `build:engine\` retries it`,
    );
}

main().catch((error: unknown) => {
  say(`skipped: ${error instanceof Error ? error.message : String(error)}; the prebuilt library stays`);
});
