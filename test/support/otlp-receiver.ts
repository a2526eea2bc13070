// A local OTLP/HTTP traces receiver for tests (127.0.0.1): takes POST /v1/traces in either
// encoding (application/x-protobuf, decoded with @bufbuild/protobuf's wire reader over the fields
// of opentelemetry/proto/trace/v1 the tests read; application/json) and keeps the spans.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";

export interface ReceivedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  /** "" for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Record<string, unknown>;
  readonly events: readonly string[];
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
}

export interface OtlpReceiver {
  /** The base URL (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** The content types the exports came with. */
  readonly contentTypes: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then((body) => {
      const type = request.headers["content-type"] ?? "";
      contentTypes.push(type);
      spans.push(...(type.includes("json") ? fromJson(JSON.parse(body.toString("utf8"))) : fromProtobuf(body)));
      response.writeHead(200, { "content-type": type }).end(type.includes("json") ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

// ---- OTLP/JSON ----

interface JsonValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonValue[] };
}
interface JsonKeyValue {
  key: string;
  value: JsonValue;
}

function jsonValue(value: JsonValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}

const jsonAttributes = (list: JsonKeyValue[] | undefined) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));

function fromJson(request: { resourceSpans?: unknown[] }): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((raw) => {
    const resourceSpans = raw as {
      resource?: { attributes?: JsonKeyValue[] };
      scopeSpans?: { spans?: Record<string, unknown>[] }[];
    };
    const service = String(jsonAttributes(resourceSpans.resource?.attributes)["service.name"]);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        traceId: String(span["traceId"]),
        spanId: String(span["spanId"]),
        parentSpanId: String(span["parentSpanId"] ?? ""),
        name: String(span["name"]),
        kind: Number(span["kind"]),
        startNs: BigInt(String(span["startTimeUnixNano"])),
        endNs: BigInt(String(span["endTimeUnixNano"])),
        attributes: jsonAttributes(span["attributes"] as JsonKeyValue[]),
        events: ((span["events"] as { name: string }[] | undefined) ?? []).map((event) => event.name),
        statusCode: Number((span["status"] as { code?: number } | undefined)?.code ?? 0),
      })),
    );
  });
}

// ---- OTLP/protobuf ----

/** Each field of a message: its number and its raw value (bytes for length-delimited fields). */
function fields(bytes: Uint8Array): [number, bigint | number | Uint8Array][] {
  const reader = new BinaryReader(bytes);
  const out: [number, bigint | number | Uint8Array][] = [];
  while (reader.pos < reader.len) {
    const [number, type] = reader.tag();
    if (type === WireType.LengthDelimited) out.push([number, reader.bytes()]);
    else if (type === WireType.Varint) out.push([number, BigInt(reader.uint64())]);
    else if (type === WireType.Bit64) out.push([number, BigInt(reader.fixed64())]);
    else if (type === WireType.Bit32) out.push([number, reader.fixed32()]);
    else reader.skip(type);
  }
  return out;
}

const all = (bytes: Uint8Array, number: number) =>
  fields(bytes)
    .filter(([n]) => n === number)
    .map(([, value]) => value as Uint8Array);
const first = (bytes: Uint8Array, number: number) => fields(bytes).find(([n]) => n === number)?.[1];
const text = (value: unknown) => (value instanceof Uint8Array ? new TextDecoder().decode(value) : "");
const hex = (value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString("hex") : "");

/** AnyValue: 1 string, 2 bool, 3 int, 4 double, 5 array. */
function anyValue(bytes: Uint8Array): unknown {
  const [number, value] = fields(bytes)[0] ?? [0, 0];
  if (number === 1) return text(value);
  if (number === 2) return value === 1n || value === 1;
  if (number === 3) return Number(BigInt.asIntN(64, BigInt(value as bigint)));
  if (number === 4) {
    const view = new DataView(new ArrayBuffer(8));
    view.setBigUint64(0, BigInt.asUintN(64, BigInt(value as bigint)), true);
    return view.getFloat64(0, true);
  }
  if (number === 5) return all(value as Uint8Array, 1).map(anyValue);
  return undefined;
}

/** KeyValue: 1 key, 2 AnyValue. */
function protoAttributes(list: Uint8Array[]): Record<string, unknown> {
  return Object.fromEntries(list.map((kv) => [text(first(kv, 1)), anyValue(first(kv, 2) as Uint8Array)]));
}

/** ExportTraceServiceRequest 1 → ResourceSpans (1 resource, 2 scope spans) → ScopeSpans (2 spans) → Span. */
function fromProtobuf(body: Uint8Array): ReceivedSpan[] {
  return all(body, 1).flatMap((resourceSpans) => {
    const service = String(
      protoAttributes(all((first(resourceSpans, 1) as Uint8Array | undefined) ?? new Uint8Array(), 1))["service.name"],
    );
    return all(resourceSpans, 2).flatMap((scope) =>
      all(scope, 2).map((span) => ({
        service,
        traceId: hex(first(span, 1)),
        spanId: hex(first(span, 2)),
        parentSpanId: hex(first(span, 4)),
        name: text(first(span, 5)),
        kind: Number(first(span, 6) ?? 0),
        startNs: BigInt(first(span, 7) as bigint),
        endNs: BigInt(first(span, 8) as bigint),
        attributes: protoAttributes(all(span, 9)),
        events: all(span, 11).map((event) => text(first(event, 2))),
        statusCode: Number(first((first(span, 15) as Uint8Array | undefined) ?? new Uint8Array(), 3) ?? 0),
      })),
    );
  });
}
