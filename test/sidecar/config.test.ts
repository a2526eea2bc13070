// The sidecar's configuration: flags win over the environment, which wins over defaults; bad
// values are refused with the flag's name. And the main-thread priority setting.
import { getPriority } from "node:os";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../sidecar/config.js";
import { applyPriority } from "../../sidecar/priority.js";

describe("readConfig", () => {
  it("takes flags over the environment over defaults", () => {
    const config = readConfig(["--sequences", "8", "--priority", "off"], { SEQUENCES: "2", THREADS: "3" });
    expect(config).toMatchObject({ sequences: 8, threads: 3, priority: "off", port: 50051, engine: "auto" });
    expect(readConfig([], {}).priority).toBe("auto");
    expect(readConfig([], { SIDECAR_PRIORITY: "-3" }).priority).toBe(-3);
  });

  it("sizes the context automatically unless CONTEXT_SIZE says otherwise", () => {
    expect(readConfig([], {}).contextSize).toBe("auto");
    expect(readConfig([], { CONTEXT_SIZE: "8192" }).contextSize).toBe(8192);
    expect(readConfig(["--context-size", "auto"], { CONTEXT_SIZE: "8192" }).contextSize).toBe("auto");
    expect(() => readConfig(["--context-size", "big"], {})).toThrow(/--context-size/);
  });

  it.each([
    [["--priority", "-21"], /--priority/],
    [["--priority", "high"], /--priority/],
    [["--sequences", "0"], /--sequences/],
    [["--engine", "gpu"], /--engine/],
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
