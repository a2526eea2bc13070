import { spawn } from "node:child_process";
import { once } from "node:events";
import { getLlamaGpuTypes } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { FinishReason } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import { clientsFor } from "../support/sidecar.js";

describe("the sidecar process", () => {
  it("shows load progress, serves, and drains streams in progress on SIGTERM", async () => {
    // node itself rather than the tsx wrapper, so that signals reach the sidecar's own process.
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "sidecar/main.ts",
        "--port",
        "0",
        "--sequences",
        "1",
        "--context-size",
        "4096",
        "--drain-ms",
        "60000",
      ],
      { env: { ...process.env, MODEL: modelPath("scripted") }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = once(child, "exit");
    try {
      await expect.poll(() => /on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)?.[1], { timeout: 30_000 }).toBeTruthy();
      expect(stderr).toMatch(/loading .*scripted\.gguf 100%/);
      const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)?.[1] ?? "";
      const client = clientsFor(url)["grpc-web"];

      let tokens = 0;
      let finish: unknown;
      for await (const e of client.generate({
        input: { case: "prompt", value: "Let us sing. Sing" },
        maxTokens: 100,
      })) {
        if (e.event.case === "token" && ++tokens === 5) child.kill("SIGTERM");
        if (e.event.case === "finish") finish = e.event.value;
      }
      // The stream that was running when SIGTERM came finished in full (the drain period is far
      // longer than the stream: on a loaded machine 1,500 tokens once outlasted a 20 s drain, and
      // 400 tokens took 18 s).
      expect(finish).toMatchObject({ reason: FinishReason.LENGTH, completionTokens: 100 });
      const [code] = await exited;
      expect(code).toBe(0);
      expect(stderr).toContain("SIGTERM, draining");
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 150_000);

  it("refuses a GPU backend this host cannot load, naming the ones it can", async () => {
    const supported = await getLlamaGpuTypes("supported");
    const missing = (["cuda", "vulkan", "metal"] as const).find((gpu) => !supported.includes(gpu));
    if (missing === undefined) return; // every backend loads here: nothing to refuse
    const child = spawn(process.execPath, ["--import", "tsx", "sidecar/main.ts", "--gpu", missing, "--port", "0"], {
      env: { ...process.env, MODEL: modelPath("scripted") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    const names = supported.map((t) => (t === false ? "false (CPU)" : t)).join(", ");
    expect(stderr).toContain(
      `--gpu ${missing}: not available on this host (its libraries or drivers are missing); available here: ${names}`,
    );
  });

  it("refuses bad flags with a clear message", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "sidecar/main.ts", "--threads", "zero"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(stderr).toContain('--threads must be an integer of at least 1, got "zero"');
  });
});
