// A peer: llama-server (one of the builds of bench/peer-build.ts) on 127.0.0.1, same model, threads
// and sequences as the sidecar, driven through its OpenAI-compatible /v1/completions.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { freePort } from "../test/support/wrangler.js";
import { peerPaths, type PeerInfo } from "./peer-paths.js";

export interface RunningPeer {
  readonly url: string;
  readonly pid: number;
  readonly args: readonly string[];
  readonly info: PeerInfo;
  stop(): Promise<void>;
}

export interface PeerSettings {
  readonly modelPath: string;
  readonly threads: number;
  /** llama-server's `-tb`: its threads for every batch of more than one token. */
  readonly threadsBatch: number;
  readonly sequences: number;
  readonly contextSize: number;
  /** More flags (e.g. the embeddings run's `--embeddings --pooling last`). */
  readonly extraArgs?: readonly string[];
}

export async function startPeer(info: PeerInfo, settings: PeerSettings): Promise<RunningPeer> {
  const port = await freePort();
  const args = [
    "-m",
    settings.modelPath,
    "-t",
    String(settings.threads),
    "-tb",
    String(settings.threadsBatch),
    "-np",
    String(settings.sequences),
    // The sidecar's context: `contextSize` tokens for each sequence.
    "-c",
    String(settings.contextSize * settings.sequences),
    // Flash attention on, as the sidecar has it on a CPU host with the local build (`--flash-attention auto`; with
    // `--engine prebuilt` it is off there): docs/decisions.md, "Flash attention on the CPU, one arithmetic a row".
    "-fa",
    "on",
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--no-webui",
    ...(settings.extraArgs ?? []),
  ];
  const binary = peerPaths(info.variant).binary;
  // The build's shared libraries sit beside the binary; its run path names the folder it was built
  // in, which may have moved since.
  const libraries = [path.dirname(binary), process.env.LD_LIBRARY_PATH].filter(Boolean).join(":");
  const child: ChildProcess = spawn(binary, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, LD_LIBRARY_PATH: libraries },
  });
  let log = "";
  const keep = (d: Buffer): void => {
    log = (log + d.toString()).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(killer);
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`llama-server exited: ${log}`);
    try {
      const response = await fetch(`${url}/health`);
      await response.arrayBuffer();
      if (response.ok) return { url, pid: child.pid ?? -1, args, info, stop };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`llama-server did not become healthy within 60 s: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
