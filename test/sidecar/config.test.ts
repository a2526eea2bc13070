// The sidecar's configuration: flags win over the environment, which wins over defaults; bad
// values are refused with the flag's name. And the main-thread priority setting.
import { mkdtempSync, writeFileSync } from "node:fs";
import { getPriority, hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../sidecar/config.js";
import { applyPriority } from "../../sidecar/nice-value.js";

describe("readConfig", () => {
  it("takes flags over the environment over defaults", () => {
    const config = readConfig(["--sequences", "8", "--priority", "off"], { SEQUENCES: "2", THREADS: "3" });
    expect(config).toMatchObject({ sequences: 8, threads: 3, priority: "off", port: 50051, engine: "auto" });
    expect(readConfig([], {}).priority).toBe("auto");
    expect(readConfig([], { SIDECAR_PRIORITY: "-3" }).priority).toBe(-3);
  });

  it("takes --lora name=path[:scale], repeated or comma-separated in LORA; a path may hold colons", () => {
    expect(readConfig(["--lora", "pirate=a/p.gguf:0.5", "--lora", "fr=hf:u/r/f.gguf"], {}).lora).toEqual([
      { name: "pirate", path: "a/p.gguf", scale: 0.5 },
      { name: "fr", path: "hf:u/r/f.gguf", scale: 1 },
    ]);
    expect(readConfig([], { LORA: "a=x.gguf:-1, b=y.gguf" }).lora).toEqual([
      { name: "a", path: "x.gguf", scale: -1 },
      { name: "b", path: "y.gguf", scale: 1 },
    ]);
    expect(() => readConfig(["--lora", "p.gguf"], {})).toThrow(/--lora must be name=path\[:scale\]/);
  });

  it("takes batch threads by flag or environment; they follow a number given for --threads, else auto", () => {
    expect(readConfig([], {})).toMatchObject({ threads: "auto", threadsBatch: "auto" });
    expect(readConfig(["--threads", "1"], {})).toMatchObject({ threads: 1, threadsBatch: 1 });
    expect(readConfig(["--threads", "1", "--threads-batch", "4"], {})).toMatchObject({ threads: 1, threadsBatch: 4 });
    expect(readConfig([], { THREADS_BATCH: "auto", THREADS: "2" })).toMatchObject({ threads: 2, threadsBatch: "auto" });
    expect(() => readConfig(["--threads-batch", "0"], {})).toThrow(/--threads-batch must be an integer of at least 1/);
  });

  it("takes the KV cache tier's budget and folder; auto by default, 0 turns it off", () => {
    expect(readConfig([], {})).toMatchObject({ cacheRam: "auto", cacheDir: undefined });
    expect(readConfig(["--cache-ram", "0"], {}).cacheRam).toBe(0);
    expect(readConfig([], { CACHE_RAM: "512", CACHE_DIR: "/var/cache/kv" })).toMatchObject({
      cacheRam: 512,
      cacheDir: "/var/cache/kv",
    });
    expect(() => readConfig(["--cache-ram=-1"], {})).toThrow(/--cache-ram must be an integer of at least 0/);
  });

  it("takes the KV-cache events: off by default; an address, the pod (host name by default), block size", () => {
    expect(readConfig([], {}).kvEvents).toBeUndefined();
    expect(readConfig(["--kv-events", "tcp://*:5557"], {}).kvEvents).toEqual({
      endpoint: "tcp://*:5557",
      pod: hostname(),
      blockSize: 16,
    });
    const env = { KV_EVENTS: "tcp://*:5557", KV_EVENTS_POD: "10.0.0.7:8080", KV_EVENTS_REPLAY: "tcp://*:5558" };
    expect(readConfig(["--kv-events-block-size", "64"], env).kvEvents).toEqual({
      endpoint: "tcp://*:5557",
      pod: "10.0.0.7:8080",
      blockSize: 64,
      replay: "tcp://*:5558",
    });
    expect(() => readConfig(["--kv-events", "localhost:5557"], {})).toThrow(
      '--kv-events must be a ZeroMQ address (tcp://*:5557, tcp://<host>:<port>), got "localhost:5557"',
    );
    expect(() => readConfig(["--kv-events", "tcp://*:5557", "--kv-events-pod", "a@b"], {})).toThrow(
      '--kv-events-pod must be a name without "@", got "a@b"',
    );
    expect(() => readConfig(["--kv-events", "tcp://*:5557", "--kv-events-block-size", "0"], {})).toThrow(
      /--kv-events-block-size must be an integer of at least 1/,
    );
  });

  it(
    "takes a chat template file's text (flag or CHAT_TEMPLATE_FILE); one that cannot be read, or is empty, stops " +
      "the start",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "chat-template-"));
      const file = join(dir, "template.jinja");
      writeFileSync(file, "{{ messages[0].content }}");
      expect(readConfig(["--chat-template-file", file], {}).chatTemplate).toBe("{{ messages[0].content }}");
      expect(readConfig([], { CHAT_TEMPLATE_FILE: file }).chatTemplate).toBe("{{ messages[0].content }}");
      expect(readConfig([], {}).chatTemplate).toBeUndefined();
      expect(() => readConfig(["--chat-template-file", join(dir, "none.jinja")], {})).toThrow(
        /^--chat-template-file: cannot read ".*none\.jinja": ENOENT/,
      );
      writeFileSync(file, " \n");
      expect(() => readConfig(["--chat-template-file", file], {})).toThrow(`--chat-template-file: "${file}" is empty`);
    },
  );

  it("takes flash attention on, off or auto (the default)", () => {
    expect(readConfig([], {}).flashAttention).toBe("auto");
    expect(readConfig(["--flash-attention", "on"], {}).flashAttention).toBe("on");
    expect(readConfig([], { FLASH_ATTENTION: "off" }).flashAttention).toBe("off");
  });

  it("sizes the context automatically unless CONTEXT_SIZE says otherwise", () => {
    expect(readConfig([], {}).contextSize).toBe("auto");
    expect(readConfig([], { CONTEXT_SIZE: "8192" }).contextSize).toBe(8192);
    expect(readConfig(["--context-size", "auto"], { CONTEXT_SIZE: "8192" }).contextSize).toBe("auto");
    expect(() => readConfig(["--context-size", "big"], {})).toThrow(/--context-size/);
  });

  it(
    "takes the GPU backend and layers by flag or environment; auto by default; false, off, cpu and none mean the " +
      "CPU",
    () => {
      expect([readConfig([], {}).gpu, readConfig([], {}).gpuLayers]).toEqual(["auto", "auto"]);
      expect(readConfig(["--gpu", "cuda", "--gpu-layers", "20"], {})).toMatchObject({ gpu: "cuda", gpuLayers: 20 });
      expect(readConfig([], { GPU: "vulkan", GPU_LAYERS: "max" })).toMatchObject({ gpu: "vulkan", gpuLayers: "max" });
      for (const off of ["false", "off", "cpu", "none"]) expect(readConfig(["--gpu", off], {}).gpu).toBe(false);
      expect(readConfig([], { EMBEDDING_CONTEXT_SIZE: "512" }).embeddingContextSize).toBe(512);
      expect(readConfig(["--embedding-model", "hf:user/repo/e.gguf"], {}).embeddingModel).toBe("hf:user/repo/e.gguf");
      expect(readConfig([], {}).embeddingModel).toBeUndefined();
    },
  );

  it(
    "takes the catalogue's settings: --model repeated or MODEL comma-separated, an explicit --models-dir, presets, " +
      "keep-alive, max, preload",
    () => {
      expect(readConfig([], {})).toMatchObject({
        models: [],
        modelsDir: "models",
        serveModelsDir: false,
        keepAliveSeconds: undefined,
        modelsMax: 3,
        preload: [],
      });
      expect(readConfig(["--model", "a.gguf", "--model", "hf:u/r/b.gguf"], { MODEL: "c" }).models).toEqual([
        "a.gguf",
        "hf:u/r/b.gguf",
      ]);
      expect(readConfig([], { MODEL: "a.gguf, tools" }).models).toEqual(["a.gguf", "tools"]);
      expect(readConfig(["--models-dir", "models"], {}).serveModelsDir).toBe(true);
      expect(readConfig([], { MODELS_DIR: "/srv/models" })).toMatchObject({
        modelsDir: "/srv/models",
        serveModelsDir: true,
      });
      const config = readConfig(["--keep-alive=-1", "--preload", "a", "--preload", "b,c"], {
        MODELS_PRESET: "presets.json",
        MODELS_MAX: "1",
        DEFAULT_MODEL: "a",
      });
      expect(config).toMatchObject({
        keepAliveSeconds: -1,
        preload: ["a", "b", "c"],
        modelsPreset: "presets.json",
        modelsMax: 1,
        defaultModel: "a",
      });
      expect(readConfig([], { KEEP_ALIVE: "0" }).keepAliveSeconds).toBe(0);
    },
  );

  it.each([
    [["--keep-alive", "5m"], /--keep-alive must be a number of seconds \(0: at once, -1: never\), got "5m"/],
    [["--keep-alive=-2"], /--keep-alive must be -1 \(never\) or a number of seconds, got "-2"/],
    [["--models-max", "0"], /--models-max must be an integer of at least 1/],
    [["--priority", "-21"], /--priority/],
    [["--priority", "high"], /--priority/],
    [["--sequences", "0"], /--sequences/],
    [["--engine", "gpu"], /--engine/],
    [["--gpu", "rocm"], /--gpu must be one of auto, cuda, vulkan, metal, false, got "rocm"/],
    [["--gpu-layers", "half"], /--gpu-layers must be auto, max or a number of layers/],
    [["--gpu-layers", "-1"], /--gpu-layers/],
    [["--embedding-context-size", "8"], /--embedding-context-size/],
    [["--flash-attention", "yes"], /--flash-attention must be one of auto, on, off, got "yes"/],
  ])("refuses %j", (argv, message) => {
    expect(() => readConfig(argv, {})).toThrow(message);
  });
});

describe("applyPriority", () => {
  it('"off" changes nothing; a nice value at or above the current one is always allowed', () => {
    const before = getPriority();
    expect(applyPriority("off")).toBe(before);
    // Raising a nice value (lowering priority) needs no privilege; this worker thread only.
    expect(applyPriority(Math.min(before + 1, 19))).toBe(Math.min(before + 1, 19));
  });
});
