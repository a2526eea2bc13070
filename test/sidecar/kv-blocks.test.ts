// The blocks behind the KV-cache events (sidecar/engine/llama/kv-blocks.ts) and their bytes (sidecar/kv-events/
// encode.ts): keys chained over parents, blocks counted per medium across holders, runs split around blocks already
// held, a partial block never published; msgpack exactly as vLLM's msgspec writes it.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { blockHash, type KvBlockEvent, KvBlocks } from "../../sidecar/engine/llama/kv-blocks.js";
import { encodeBatch } from "../../sidecar/kv-events/encode.js";

const tokens = (...ids: number[]) => ids as never[];

describe("KvBlocks", () => {
  it("stores chained blocks once per medium, removes them when their last holder lets go", () => {
    const batches: (readonly KvBlockEvent[])[] = [];
    const blocks = new KvBlocks(2, (events) => batches.push(events));
    const h1 = blockHash(undefined, tokens(1, 2));
    const h12 = blockHash(h1, tokens(3, 4));
    blocks.hold("a", "GPU", tokens(1, 2, 3, 4, 5));
    expect(batches.splice(0)).toEqual([
      [{ kind: "stored", hashes: [h1, h12], parent: undefined, tokens: [1, 2, 3, 4], medium: "GPU" }],
    ]);
    // The same tokens again, or one more in the partial block: nothing.
    blocks.hold("a", "GPU", tokens(1, 2, 3, 4, 5));
    blocks.hold("b", "GPU", tokens(1, 2, 3, 4));
    expect(batches.splice(0)).toEqual([]);
    // A holder that diverges after the first block: its own second block, chained to the first; h12 still held by b.
    const h19 = blockHash(h1, tokens(9, 9));
    blocks.hold("a", "GPU", tokens(1, 2, 9, 9));
    expect(batches.splice(0)).toEqual([[{ kind: "stored", hashes: [h19], parent: h1, tokens: [9, 9], medium: "GPU" }]]);
    // Another medium counts apart; a run is split around a block that medium already holds.
    blocks.hold("s", "CPU", tokens(1, 2));
    blocks.hold("t", "CPU", tokens(1, 2, 3, 4, 7, 7));
    const h127 = blockHash(h12, tokens(7, 7));
    expect(batches.splice(0)).toEqual([
      [{ kind: "stored", hashes: [h1], parent: undefined, tokens: [1, 2], medium: "CPU" }],
      [{ kind: "stored", hashes: [h12, h127], parent: h1, tokens: [3, 4, 7, 7], medium: "CPU" }],
    ]);
    blocks.drop("b");
    expect(batches.splice(0)).toEqual([[{ kind: "removed", hashes: [h12], medium: "GPU" }]]);
    expect([...blocks.view().keys()].sort()).toEqual(
      [`GPU:${h1}`, `GPU:${h19}`, `CPU:${h1}`, `CPU:${h12}`, `CPU:${h127}`].sort(),
    );
    blocks.close();
    expect(batches.splice(0)).toEqual([
      [
        { kind: "removed", hashes: [h1, h19], medium: "GPU" },
        { kind: "removed", hashes: [h1, h12, h127], medium: "CPU" },
      ],
    ]);
    blocks.hold("a", "GPU", tokens(5, 6));
    expect(batches).toEqual([]);
  });

  it("keys a block by SHA-256 over its parent's key and its tokens: the first 8 bytes, big-endian", () => {
    const bytes = Buffer.from("00000000000000070100000002000000", "hex"); // parent 7, tokens 1 and 2 (LE)
    expect(blockHash(7n, tokens(1, 2))).toBe(createHash("sha256").update(bytes).digest().readBigUInt64BE(0));
    // A sequence's first block: its parent's key taken as 8 zero bytes.
    expect(blockHash(undefined, tokens(1, 2))).toBe(blockHash(0n, tokens(1, 2)));
    expect(blockHash(undefined, tokens(1, 2))).not.toBe(blockHash(1n, tokens(1, 2)));
    expect(blockHash(undefined, tokens(1, 2))).not.toBe(blockHash(undefined, tokens(2, 1)));
  });
});

describe("encodeBatch", () => {
  it("writes vLLM's EventBatch: [float64 ts, [tagged arrays], 0], keys as uint64, nil where vLLM has None", () => {
    const bytes = encodeBatch(1.5, [
      { kind: "stored", hashes: [5n], parent: undefined, tokens: [7, 8], medium: "GPU" },
      { kind: "removed", hashes: [2n ** 63n], medium: "CPU" },
      { kind: "cleared" },
    ]);
    expect(Buffer.from(bytes).toString("hex")).toBe(
      [
        "93", // [ts, events, rank]
        "cb3ff8000000000000", // 1.5 as float64
        "93", // three events
        "98ab426c6f636b53746f726564", // ["BlockStored" (8 fields)
        "91cf0000000000000005", // [5] as uint64
        "c0", // parent nil
        "920708", // token_ids [7, 8]
        "02", // block_size 2
        "c0", // lora_id nil
        "a3475055", // "GPU"
        "c0", // lora_name nil]
        "93ac426c6f636b52656d6f766564", // ["BlockRemoved"
        "91cf8000000000000000", // [2^63]
        "a3435055", // "CPU"]
        "91b0416c6c426c6f636b73436c6561726564", // ["AllBlocksCleared"]
        "00", // data_parallel_rank 0
      ].join(""),
    );
    // A whole number of seconds is still a float64.
    expect(Buffer.from(encodeBatch(2, [])).subarray(0, 2).toString("hex")).toBe("93cb");
  });
});
