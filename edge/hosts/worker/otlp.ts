// The Worker's OTLP/HTTP bodies (docs/decisions.md, "Traces"): one ExportTraceServiceRequest, as
// protobuf written with @bufbuild/protobuf's BinaryWriter (the gRPC-Web client's, already in the
// bundle) or as OTLP/JSON. The bytes are those of OpenTelemetry's own trace serializers
// (test/edge/otlp.test.ts), without their second protobuf writer (docs/performance.md, "The
// Worker's weight"). Attribute values are what the SDK keeps: primitives and arrays of them.
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import type { AttributeValue, Attributes, HrTime } from "@opentelemetry/api";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";

type Value = AttributeValue | null | undefined;
type Json = Record<string, unknown>;

const LEN = WireType.LengthDelimited;

const nanos = (time: HrTime): bigint => BigInt(Math.trunc(time[0])) * 1_000_000_000n + BigInt(Math.trunc(time[1]));
const bytesOf = (hex: string): Uint8Array =>
  Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
/** OTLP's span flags: the W3C trace flags, and whether the parent (or a link's span) is remote. */
const flagsOf = (traceFlags: number, remote: boolean | undefined): number =>
  (traceFlags & 0xff) | 0x100 | (remote === true ? 0x200 : 0);

/** The spans by resource, then by instrumentation scope, in the order they came. */
function grouped(spans: readonly ReadableSpan[]): Map<Resource, Map<string, ReadableSpan[]>> {
  const resources = new Map<Resource, Map<string, ReadableSpan[]>>();
  for (const span of spans) {
    const { name, version, schemaUrl } = span.instrumentationScope;
    const scopes = resources.get(span.resource) ?? new Map<string, ReadableSpan[]>();
    resources.set(span.resource, scopes);
    const key = `${name}@${version ?? ""}:${schemaUrl ?? ""}`;
    scopes.set(key, [...(scopes.get(key) ?? []), span]);
  }
  return resources;
}

/** A length-delimited field: `write` fills it. */
function nested(w: BinaryWriter, field: number, write: () => void): void {
  w.tag(field, LEN).fork();
  write();
  w.join();
}

function writeValue(w: BinaryWriter, value: Value): void {
  if (typeof value === "string") w.tag(1, LEN).string(value);
  else if (typeof value === "boolean") w.tag(2, WireType.Varint).bool(value);
  else if (typeof value === "number" && Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63)
    w.tag(3, WireType.Varint).int64(value);
  else if (typeof value === "number") w.tag(4, WireType.Bit64).double(value);
  else if (Array.isArray(value))
    nested(w, 5, () => {
      for (const item of value as Value[]) nested(w, 1, () => writeValue(w, item));
    });
}

function writeAttributes(w: BinaryWriter, field: number, attributes: Attributes | undefined): void {
  for (const [key, value] of Object.entries(attributes ?? {}))
    nested(w, field, () => {
      w.tag(1, LEN).string(key);
      nested(w, 2, () => writeValue(w, value));
    });
}

function writeSpan(w: BinaryWriter, span: ReadableSpan): void {
  const context = span.spanContext();
  const parent = span.parentSpanContext;
  w.tag(1, LEN).bytes(bytesOf(context.traceId)).tag(2, LEN).bytes(bytesOf(context.spanId));
  const state = context.traceState?.serialize();
  if (state) w.tag(3, LEN).string(state);
  if (parent?.spanId) w.tag(4, LEN).bytes(bytesOf(parent.spanId));
  w.tag(5, LEN).string(span.name);
  w.tag(6, WireType.Varint).int32(span.kind + 1);
  w.tag(7, WireType.Bit64).fixed64(nanos(span.startTime)).tag(8, WireType.Bit64).fixed64(nanos(span.endTime));
  writeAttributes(w, 9, span.attributes);
  w.tag(10, WireType.Varint).uint32(span.droppedAttributesCount);
  for (const event of span.events)
    nested(w, 11, () => {
      w.tag(1, WireType.Bit64).fixed64(nanos(event.time)).tag(2, LEN).string(event.name);
      writeAttributes(w, 3, event.attributes);
      w.tag(4, WireType.Varint).uint32(event.droppedAttributesCount ?? 0);
    });
  w.tag(12, WireType.Varint).uint32(span.droppedEventsCount);
  for (const link of span.links)
    nested(w, 13, () => {
      w.tag(1, LEN).bytes(bytesOf(link.context.traceId)).tag(2, LEN).bytes(bytesOf(link.context.spanId));
      const linkState = link.context.traceState?.serialize();
      if (linkState) w.tag(3, LEN).string(linkState);
      writeAttributes(w, 4, link.attributes);
      w.tag(5, WireType.Varint).uint32(link.droppedAttributesCount ?? 0);
      w.tag(6, WireType.Bit32).fixed32(flagsOf(link.context.traceFlags, link.context.isRemote));
    });
  w.tag(14, WireType.Varint).uint32(span.droppedLinksCount);
  nested(w, 15, () => {
    if (span.status.message) w.tag(2, LEN).string(span.status.message);
    w.tag(3, WireType.Varint).int32(span.status.code);
  });
  w.tag(16, WireType.Bit32).fixed32(flagsOf(context.traceFlags, parent?.isRemote));
}

function writeScopeSpans(w: BinaryWriter, spans: readonly ReadableSpan[]): void {
  const { name, version, schemaUrl } = (spans[0] as ReadableSpan).instrumentationScope;
  nested(w, 1, () => {
    w.tag(1, LEN).string(name);
    if (version) w.tag(2, LEN).string(version);
  });
  for (const span of spans) nested(w, 2, () => writeSpan(w, span));
  if (schemaUrl) w.tag(3, LEN).string(schemaUrl);
}

/** ExportTraceServiceRequest as protobuf (`application/x-protobuf`). */
export function otlpProtobuf(spans: readonly ReadableSpan[]): Uint8Array {
  const w = new BinaryWriter();
  for (const [resource, scopes] of grouped(spans))
    nested(w, 1, () => {
      nested(w, 1, () => {
        writeAttributes(w, 1, resource.attributes);
        w.tag(2, WireType.Varint).uint32(0);
      });
      for (const spansOfScope of scopes.values()) nested(w, 2, () => writeScopeSpans(w, spansOfScope));
      if (resource.schemaUrl) w.tag(3, LEN).string(resource.schemaUrl);
    });
  return w.finish();
}

function jsonValue(value: Value): Json {
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "number") return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  return Array.isArray(value) ? { arrayValue: { values: value.map(jsonValue) } } : {};
}

const jsonAttributes = (attributes: Attributes | undefined): Json[] =>
  Object.entries(attributes ?? {}).map(([key, value]) => ({ key, value: jsonValue(value) }));

function jsonSpan(span: ReadableSpan): Json {
  const context = span.spanContext();
  const parent = span.parentSpanContext;
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    parentSpanId: parent?.spanId || undefined,
    traceState: context.traceState?.serialize(),
    name: span.name,
    kind: span.kind + 1,
    startTimeUnixNano: String(nanos(span.startTime)),
    endTimeUnixNano: String(nanos(span.endTime)),
    attributes: jsonAttributes(span.attributes),
    droppedAttributesCount: span.droppedAttributesCount,
    events: span.events.map((e) => ({
      attributes: jsonAttributes(e.attributes),
      name: e.name,
      timeUnixNano: String(nanos(e.time)),
      droppedAttributesCount: e.droppedAttributesCount ?? 0,
    })),
    droppedEventsCount: span.droppedEventsCount,
    status: { code: span.status.code, message: span.status.message },
    links: span.links.map(({ context: linked, attributes, droppedAttributesCount }) => ({
      attributes: jsonAttributes(attributes),
      spanId: linked.spanId,
      traceId: linked.traceId,
      traceState: linked.traceState?.serialize(),
      droppedAttributesCount: droppedAttributesCount ?? 0,
      flags: flagsOf(linked.traceFlags, linked.isRemote),
    })),
    droppedLinksCount: span.droppedLinksCount,
    flags: flagsOf(context.traceFlags, parent?.isRemote),
  };
}

/** ExportTraceServiceRequest as OTLP/JSON (`application/json`): ids in hex, times as strings. */
export function otlpJson(spans: readonly ReadableSpan[]): Uint8Array {
  const resourceSpans = [...grouped(spans)].map(([resource, scopes]) => ({
    resource: {
      attributes: jsonAttributes(resource.attributes),
      droppedAttributesCount: 0,
      schemaUrl: resource.schemaUrl || undefined,
    },
    scopeSpans: [...scopes.values()].map((spansOfScope) => {
      const { name, version, schemaUrl } = (spansOfScope[0] as ReadableSpan).instrumentationScope;
      return { scope: { name, version }, spans: spansOfScope.map(jsonSpan), schemaUrl };
    }),
    schemaUrl: resource.schemaUrl || undefined,
  }));
  return new TextEncoder().encode(JSON.stringify({ resourceSpans }));
}
