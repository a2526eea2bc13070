// The metadata of a GGUF file, read synchronously: the writer's mirror (writer.ts), for the real
// tokenizers llama.cpp ships (`models/ggml-vocab-*.gguf`, llama-source.ts) that twins take their
// vocabulary from, and the tensors' names, shapes and types (their data is not read).
import { readFileSync } from "node:fs";
import type { MetadataValue, ScalarType } from "./writer.js";

const TYPES: readonly (ScalarType | "array")[] = [
  "uint8",
  "int8",
  "uint16",
  "int16",
  "uint32",
  "int32",
  "float32",
  "bool",
  "string",
  "array",
  "uint64",
  "int64",
  "float64",
];

class Cursor {
  private at = 0;
  private readonly view: DataView;
  // A leading byte-order mark is part of a token (`\uFEFF//`): kept, not stripped.
  private readonly text = new TextDecoder("utf-8", { ignoreBOM: true });
  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  u32(): number {
    this.at += 4;
    return this.view.getUint32(this.at - 4, true);
  }
  u64(): bigint {
    this.at += 8;
    return this.view.getBigUint64(this.at - 8, true);
  }
  string(): string {
    const length = Number(this.u64());
    this.at += length;
    return this.text.decode(this.bytes.subarray(this.at - length, this.at));
  }
  type(): ScalarType | "array" {
    const id = this.u32();
    const type = TYPES[id];
    if (type === undefined) throw new Error(`unknown GGUF value type ${id}`);
    return type;
  }
  scalar(type: ScalarType): number | bigint | boolean | string {
    const v = this.view;
    const sizes = {
      uint8: 1,
      int8: 1,
      uint16: 2,
      int16: 2,
      uint32: 4,
      int32: 4,
      float32: 4,
      bool: 1,
      uint64: 8,
      int64: 8,
      float64: 8,
    } as const;
    if (type === "string") return this.string();
    const at = this.at;
    this.at += sizes[type];
    switch (type) {
      case "uint8":
        return v.getUint8(at);
      case "int8":
        return v.getInt8(at);
      case "uint16":
        return v.getUint16(at, true);
      case "int16":
        return v.getInt16(at, true);
      case "uint32":
        return v.getUint32(at, true);
      case "int32":
        return v.getInt32(at, true);
      case "float32":
        return v.getFloat32(at, true);
      case "bool":
        return v.getUint8(at) !== 0;
      case "uint64":
        return v.getBigUint64(at, true);
      case "int64":
        return v.getBigInt64(at, true);
      case "float64":
        return v.getFloat64(at, true);
    }
  }
  value(): MetadataValue {
    const type = this.type();
    if (type !== "array") return { type, value: this.scalar(type) } as MetadataValue;
    const itemType = this.type();
    if (itemType === "array" || itemType === "uint64" || itemType === "int64")
      throw new Error(`GGUF arrays of ${itemType} are not read`);
    const count = Number(this.u64());
    const values: unknown[] = new Array(count);
    for (let i = 0; i < count; i++) values[i] = this.scalar(itemType);
    return { type: "array", itemType, values } as MetadataValue;
  }
}

/** What the file says of a tensor (its data is not read). */
export interface TensorInfo {
  readonly name: string;
  /** ggml order: shape[0] is the innermost dimension. */
  readonly shape: readonly number[];
  /** ggml's type id (0 F32, 1 F16). */
  readonly type: number;
}

function readHeader(path: string, withTensors: boolean) {
  const cursor = new Cursor(readFileSync(path));
  if (cursor.u32() !== 0x46554747) throw new Error(`${path} is not a GGUF file`);
  const version = cursor.u32();
  if (version < 2) throw new Error(`${path}: GGUF version ${version} is not read`);
  const tensorCount = Number(cursor.u64());
  const count = Number(cursor.u64());
  const metadata = new Map<string, MetadataValue>();
  for (let i = 0; i < count; i++) metadata.set(cursor.string(), cursor.value());
  const tensors: TensorInfo[] = [];
  for (let i = 0; withTensors && i < tensorCount; i++) {
    const name = cursor.string();
    const shape = Array.from({ length: cursor.u32() }, () => Number(cursor.u64()));
    const type = cursor.u32();
    cursor.u64(); // the data's offset
    tensors.push({ name, shape, type });
  }
  return { metadata, tensors };
}

/** A GGUF file's metadata, in file order. */
export function readGgufMetadata(path: string): Map<string, MetadataValue> {
  return readHeader(path, false).metadata;
}

/** A GGUF file's metadata and its tensors' names, shapes and types, in file order. */
export function readGgufHeader(path: string): { metadata: Map<string, MetadataValue>; tensors: TensorInfo[] } {
  return readHeader(path, true);
}
