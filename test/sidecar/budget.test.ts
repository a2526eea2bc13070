// The budget's decisions (sidecar/catalogue/budget.ts) on numbers given to it: a model loads when
// it fits; idle models go least recently used first, no more than needed; a load that needs a busy
// or loading model's room waits; one that never fits is refused with the figures; --models-max
// counts loading models; the margin is max(512 MiB, 5% of the total).
import { describe, expect, it } from "vitest";
import { decide, freeRoom, marginOf, type Resident } from "../../sidecar/catalogue/budget.js";

const MIB = 2 ** 20;
const GIB = 2 ** 30;
const ram = (mib: number) => ({ ram: mib * MIB, vram: 0 });
const idle = (name: string, needMiB: number, lastUsed: number, weightsMiB = 0): Resident => ({
  name,
  need: ram(needMiB),
  hidden: ram(weightsMiB),
  state: "idle",
  lastUsed,
});
const host = { free: ram(8 * 1024), total: ram(16 * 1024) };
// 16 GiB in all: the margin is 5% of it (819 MiB), above 512 MiB.
const margin = Math.round(16 * GIB * 0.05);

describe("marginOf", () => {
  it("keeps max(512 MiB, 5% of the total) free, and nothing where there is nothing (no GPU)", () => {
    expect(marginOf(4 * GIB)).toBe(512 * MIB);
    expect(marginOf(16 * GIB)).toBe(margin);
    expect(marginOf(0)).toBe(0);
  });
});

describe("freeRoom", () => {
  it(
    "is free memory less the weights of loaded models (mapped: free memory does not show them), less the " + "margin",
    () => {
      const room = freeRoom(host.free, host.total, [idle("a", 3000, 1, 1000)]);
      expect(room).toEqual({ ram: 8 * GIB - 1000 * MIB - margin, vram: 0 });
    },
  );
});

describe("decide", () => {
  it("loads a model that fits, unloading nothing", () => {
    expect(
      decide({ ...host, candidate: { name: "c", need: ram(2000) }, residents: [idle("a", 1000, 1)], maxModels: 3 }),
    ).toEqual({
      action: "load",
      unload: [],
    });
  });

  it("unloads the least recently used idle model for --models-max, and only one", () => {
    const residents = [idle("b", 100, 5), idle("a", 100, 2), idle("c", 100, 9)];
    expect(decide({ ...host, candidate: { name: "d", need: ram(100) }, residents, maxModels: 3 })).toEqual({
      action: "load",
      unload: ["a"],
    });
  });

  it("unloads idle models, least recently used first, until the need fits the memory", () => {
    // Room: 8 GiB free − 3 × 1 GiB of weights − margin ≈ 4.2 GiB; the candidate needs 7 GiB.
    const residents = [idle("new", 3000, 9, 1024), idle("old", 3000, 1, 1024), idle("mid", 3000, 5, 1024)];
    expect(decide({ ...host, candidate: { name: "big", need: ram(7 * 1024) }, residents, maxModels: 8 })).toEqual({
      action: "load",
      unload: ["old"],
    });
  });

  it("waits when only a busy or loading model would make room, and says why", () => {
    const busy: Resident = { ...idle("busy", 100, 1), state: "busy" };
    const loading: Resident = { ...idle("loading", 100, 2), state: "loading" };
    expect(
      decide({ ...host, candidate: { name: "d", need: ram(100) }, residents: [busy, loading], maxModels: 2 }),
    ).toEqual({
      action: "wait",
      reason: "2 models are loaded (--models-max) and the models that would make room are in use or loading",
    });
    const hungry: Resident = { ...idle("hungry", 6 * 1024, 1), hidden: ram(6 * 1024), state: "busy" };
    expect(
      decide({ ...host, candidate: { name: "d", need: ram(3 * 1024) }, residents: [hungry], maxModels: 4 }),
    ).toMatchObject({
      action: "wait",
      reason: "the memory budget is full and the models that would make room are in use or loading",
    });
  });

  it("refuses a model that does not fit even with every other model unloaded, with the figures", () => {
    const decision = decide({
      ...host,
      candidate: { name: "huge", need: ram(9 * 1024) },
      residents: [idle("a", 500, 1, 100)],
      maxModels: 3,
    });
    // 8 GiB free − 100 MiB of weights − 819 MiB margin + 500 MiB the other model frees = 7773 MiB.
    expect(decision).toEqual({
      action: "refuse",
      reason:
        "it needs 9216 MiB of memory; the budget holds 7773 MiB with every other model unloaded (free memory less a " +
        "margin of 819 MiB)",
    });
  });

  it("counts memory held outside the catalogue (a shared embedding model) against the room", () => {
    const input = { ...host, candidate: { name: "c", need: ram(7 * 1024) }, residents: [], maxModels: 3 };
    expect(decide(input).action).toBe("load");
    expect(decide({ ...input, reserved: ram(1024) }).action).toBe("refuse");
  });

  it("checks GPU memory apart from host memory when the model offloads", () => {
    const gpu = { free: { ram: 8 * GIB, vram: 2 * GIB }, total: { ram: 16 * GIB, vram: 8 * GIB } };
    const residents: Resident[] = [
      { name: "a", need: { ram: 0, vram: GIB }, hidden: { ram: 0, vram: 0 }, state: "idle", lastUsed: 1 },
    ];
    // Room on the GPU: 2 GiB free − 512 MiB margin = 1.5 GiB; 2 GiB fit once "a" (1 GiB) goes.
    expect(
      decide({ ...gpu, candidate: { name: "b", need: { ram: 0, vram: 2 * GIB } }, residents, maxModels: 3 }),
    ).toEqual({ action: "load", unload: ["a"] });
    expect(
      decide({ ...gpu, candidate: { name: "b", need: { ram: 0, vram: 3 * GIB } }, residents, maxModels: 3 }).action,
    ).toBe("refuse");
  });
});
