// A small, deterministic GGUF v3 writer: header, typed metadata, tensor infos, tensor data
// aligned to 32 bytes. F32 and F16 tensors, and Q4_K and Q8_0 given as their blocks' bytes. Same input → same bytes.
import { createHash } from "node:crypto";
import { closeSync, openSync, renameSync, writeSync } from "node:fs";

/** Scalar metadata value types of the GGUF format, by their on-disk ids. */
const VALUE_TYPE = {
  uint8: 0,
  int8: 1,
  uint16: 2,
  int16: 3,
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
  uint64: 10,
  int64: 11,
  float64: 12,
} as const;

export type ScalarType = Exclude<keyof typeof VALUE_TYPE, "array">;
type NumberType = Exclude<ScalarType, "bool" | "string" | "uint64" | "int64">;

export type ScalarValue =
  | { readonly type: NumberType; readonly value: number }
  | { readonly type: "uint64" | "int64"; readonly value: bigint }
  | { readonly type: "bool"; readonly value: boolean }
  | { readonly type: "string"; readonly value: string };

export type MetadataValue =
  | ScalarValue
  | { readonly type: "array"; readonly itemType: NumberType; readonly values: readonly number[] }
  | { readonly type: "array"; readonly itemType: "string"; readonly values: readonly string[] }
  | { readonly type: "array"; readonly itemType: "bool"; readonly values: readonly boolean[] };

/** Helpers for the metadata types a llama model needs. */
export const meta = {
  u32: (value: number): MetadataValue => ({ type: "uint32", value }),
  i32: (value: number): MetadataValue => ({ type: "int32", value }),
  f32: (value: number): MetadataValue => ({ type: "float32", value }),
  bool: (value: boolean): MetadataValue => ({ type: "bool", value }),
  str: (value: string): MetadataValue => ({ type: "string", value }),
  strings: (values: readonly string[]): MetadataValue => ({ type: "array", itemType: "string", values }),
  f32s: (values: readonly number[]): MetadataValue => ({ type: "array", itemType: "float32", values }),
  i32s: (values: readonly number[]): MetadataValue => ({ type: "array", itemType: "int32", values }),
};

export type Tensor =
  /** `shape` is in ggml order: shape[0] is the innermost (contiguous) dimension. */
  | { readonly name: string; readonly shape: readonly number[]; readonly type: "F32"; readonly data: Float32Array }
  /** F16 data is given as raw IEEE half bits (see `toFloat16Bits`). */
  | { readonly name: string; readonly shape: readonly number[]; readonly type: "F16"; readonly data: Uint16Array }
  /** A quantized tensor's data is given as its blocks' bytes, blocks along shape[0] (see `QUANT_BLOCK`). */
  | { readonly name: string; readonly shape: readonly number[]; readonly type: QuantType; readonly data: Uint8Array };

export interface GgufFile {
  /** Written in this order. Keys must be unique. */
  readonly metadata: ReadonlyArray<readonly [key: string, value: MetadataValue]>;
  /** Written in this order. Names must be unique. */
  readonly tensors: readonly Tensor[];
}

export const GGUF_ALIGNMENT = 32;
const TENSOR_TYPE = { F32: 0, F16: 1, Q8_0: 8, Q4_K: 12 } as const;

/** The block-quantized types the writer takes as bytes. */
export type QuantType = "Q4_K" | "Q8_0";
/**
 * llama.cpp's blocks: Q4_K 256 values in 144 bytes (scale and minimum as F16, 12 bytes of 6-bit scales, 4-bit values),
 * Q8_0 32 values in 34 bytes (a scale as F16, 8-bit values).
 */
export const QUANT_BLOCK: Readonly<Record<QuantType, { readonly values: number; readonly bytes: number }>> = {
  Q4_K: { values: 256, bytes: 144 },
  Q8_0: { values: 32, bytes: 34 },
};

/** How many entries a tensor's data array holds: values, or bytes of blocks for a quantized type. */
function dataLength(t: Tensor): number {
  const n = elementCount(t);
  if (t.type === "F32" || t.type === "F16") return n;
  const block = QUANT_BLOCK[t.type];
  return (n / block.values) * block.bytes;
}

/** Growable little-endian byte buffer for the header part of the file. */
class ByteSink {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u8(v: number): void {
    this.reserve(1);
    this.view.setUint8(this.length, v);
    this.length += 1;
  }
  i8(v: number): void {
    this.reserve(1);
    this.view.setInt8(this.length, v);
    this.length += 1;
  }
  u16(v: number): void {
    this.reserve(2);
    this.view.setUint16(this.length, v, true);
    this.length += 2;
  }
  i16(v: number): void {
    this.reserve(2);
    this.view.setInt16(this.length, v, true);
    this.length += 2;
  }
  u32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, v, true);
    this.length += 4;
  }
  i32(v: number): void {
    this.reserve(4);
    this.view.setInt32(this.length, v, true);
    this.length += 4;
  }
  f32(v: number): void {
    this.reserve(4);
    this.view.setFloat32(this.length, v, true);
    this.length += 4;
  }
  f64(v: number): void {
    this.reserve(8);
    this.view.setFloat64(this.length, v, true);
    this.length += 8;
  }
  u64(v: bigint | number): void {
    this.reserve(8);
    this.view.setBigUint64(this.length, BigInt(v), true);
    this.length += 8;
  }
  i64(v: bigint): void {
    this.reserve(8);
    this.view.setBigInt64(this.length, v, true);
    this.length += 8;
  }
  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  string(s: string): void {
    const b = new TextEncoder().encode(s);
    this.u64(b.length);
    this.bytes(b);
  }
  padTo(alignment: number): void {
    while (this.length % alignment !== 0) this.u8(0);
  }
  result(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

function writeNumber(sink: ByteSink, type: NumberType, v: number): void {
  switch (type) {
    case "uint8":
      sink.u8(v);
      return;
    case "int8":
      sink.i8(v);
      return;
    case "uint16":
      sink.u16(v);
      return;
    case "int16":
      sink.i16(v);
      return;
    case "uint32":
      sink.u32(v);
      return;
    case "int32":
      sink.i32(v);
      return;
    case "float32":
      sink.f32(v);
      return;
    case "float64":
      sink.f64(v);
      return;
  }
}

function writeValue(sink: ByteSink, value: MetadataValue): void {
  sink.u32(VALUE_TYPE[value.type]);
  switch (value.type) {
    case "string":
      sink.string(value.value);
      return;
    case "bool":
      sink.u8(value.value ? 1 : 0);
      return;
    case "uint64":
      sink.u64(value.value);
      return;
    case "int64":
      sink.i64(value.value);
      return;
    case "array": {
      sink.u32(VALUE_TYPE[value.itemType]);
      sink.u64(value.values.length);
      if (value.itemType === "string") for (const s of value.values) sink.string(s);
      else if (value.itemType === "bool") for (const b of value.values) sink.u8(b ? 1 : 0);
      else for (const n of value.values) writeNumber(sink, value.itemType, n);
      return;
    }
    default:
      writeNumber(sink, value.type, value.value);
      return;
  }
}

function elementCount(t: Tensor): number {
  return t.shape.reduce((a, b) => a * b, 1);
}

function checkFile(file: GgufFile): void {
  const keys = new Set<string>();
  for (const [key] of file.metadata) {
    if (keys.has(key)) throw new Error(`GGUF: duplicate metadata key ${key}`);
    keys.add(key);
  }
  const names = new Set<string>();
  for (const t of file.tensors) {
    if (names.has(t.name)) throw new Error(`GGUF: duplicate tensor ${t.name}`);
    names.add(t.name);
    if (t.shape.length < 1 || t.shape.length > 4 || t.shape.some((d) => !Number.isInteger(d) || d < 1)) {
      throw new Error(`GGUF: tensor ${t.name} has an invalid shape [${t.shape.join(", ")}]`);
    }
    const block = t.type === "F32" || t.type === "F16" ? undefined : QUANT_BLOCK[t.type];
    if (block !== undefined && (t.shape[0] ?? 0) % block.values !== 0) {
      throw new Error(`GGUF: ${t.type} tensor ${t.name} needs rows of a multiple of ${block.values} values`);
    }
    if (dataLength(t) !== t.data.length) {
      throw new Error(`GGUF: tensor ${t.name} has ${t.data.length} entries for shape [${t.shape.join(", ")}]`);
    }
  }
}

const padding = (n: number): number => (GGUF_ALIGNMENT - (n % GGUF_ALIGNMENT)) % GGUF_ALIGNMENT;

/**
 * The file as a list of byte chunks (header, then each tensor's data and padding). Tensor data
 * chunks are views of the tensors' own arrays (little-endian hosts only), nothing is copied.
 */
export function ggufChunks(file: GgufFile): Uint8Array[] {
  checkFile(file);
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error("GGUF: big-endian hosts are not supported");
  const sink = new ByteSink();
  sink.u32(0x46554747); // "GGUF"
  sink.u32(3);
  sink.u64(file.tensors.length);
  sink.u64(file.metadata.length);
  for (const [key, value] of file.metadata) {
    sink.string(key);
    writeValue(sink, value);
  }
  let offset = 0;
  for (const t of file.tensors) {
    sink.string(t.name);
    sink.u32(t.shape.length);
    for (const d of t.shape) sink.u64(d);
    sink.u32(TENSOR_TYPE[t.type]);
    sink.u64(offset);
    offset += t.data.byteLength + padding(t.data.byteLength);
  }
  sink.padTo(GGUF_ALIGNMENT);
  const chunks: Uint8Array[] = [sink.result()];
  for (const t of file.tensors) {
    chunks.push(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    const pad = padding(t.data.byteLength);
    if (pad > 0) chunks.push(new Uint8Array(pad));
  }
  return chunks;
}

/** The whole file in one buffer. */
export function encodeGguf(file: GgufFile): Uint8Array {
  const chunks = ggufChunks(file);
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * Writes the file to a temporary name next to `path`, then renames it into place, so a reader
 * (or a concurrent writer of the same bytes) never sees a partial file. Returns the size and
 * SHA-256 of what was written.
 */
export function writeGguf(path: string, file: GgufFile): { bytes: number; sha256: string } {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  const hash = createHash("sha256");
  const fd = openSync(tmp, "w");
  let bytes = 0;
  try {
    for (const chunk of ggufChunks(file)) {
      let done = 0;
      while (done < chunk.length) done += writeSync(fd, chunk, done, chunk.length - done);
      hash.update(chunk);
      bytes += chunk.length;
    }
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  return { bytes, sha256: hash.digest("hex") };
}

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** IEEE 754 binary16 bits of `x`, rounded to nearest even (overflow → ±Infinity). */
export function toFloat16Bits(x: number): number {
  f32Scratch[0] = x;
  const bits = u32Scratch[0] ?? 0;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0); // Inf / NaN
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign; // underflows to ±0
    const m = mant | 0x800000; // implicit leading 1
    const shift = 14 - e;
    let half = m >>> shift;
    const rest = m & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rest > mid || (rest === mid && (half & 1) === 1)) half += 1;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half += 1; // may carry into exponent: correct
  return sign | half;
}

/** The number an IEEE 754 binary16 bit pattern holds (the inverse of `toFloat16Bits`). */
export function fromFloat16Bits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0x1f) return mant === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  if (exp === 0) return sign * mant * 2 ** -24;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}
