// One table per protocol of its request fields (docs/contract.md, "Request fields"): each field's
// fate (implemented, ignored, refused), its check (a zod schema), where it goes in the proto,
// what happens when it is absent, its limits and why. The protocol's request schema is built from
// the table (`shapeOf`), the fields that map alone are written from it (`writeFields`), and
// docs/contract.md's field tables are written from it (`npm run docs:fields`), so the three cannot
// disagree. Fields that map together (messages, tools, a tool choice and what it allows) name the
// function of the protocol's to-request.ts that maps them.
import type { MessageInitShape } from "@bufbuild/protobuf";
import * as z from "zod";
import type {
  ChatSchema,
  GenerateRequestSchema,
  SamplingOptionsSchema,
} from "../../proto/gen/inference/v1/inference_pb.js";

export type Fate = "implemented" | "ignored" | "refused";

/** A message's init object (its fields, all optional), not a message already made. */
type Init<T> = Exclude<T, { readonly $typeName: string }>;
export type GenerateInit = Init<MessageInitShape<typeof GenerateRequestSchema>>;
export type SamplingInit = Init<MessageInitShape<typeof SamplingOptionsSchema>>;
export type ChatInit = Init<MessageInitShape<typeof ChatSchema>>;

/** What a table's rows write: the GenerateRequest's own fields, its sampling options and a chat input's fields. */
export interface RequestDraft {
  readonly request: Omit<GenerateInit, "input" | "sampling">;
  readonly sampling: SamplingInit;
  readonly chat: ChatInit;
}

export function newDraft(): RequestDraft {
  return { request: {}, sampling: {}, chat: {} };
}

/** What docs/contract.md says of a field. */
export interface FieldDoc {
  /** Where it goes in the proto, or which function maps it with others. */
  readonly proto?: string;
  /** What the server does when it is absent. */
  readonly absent?: string;
  /** The values accepted, when narrower than the type. */
  readonly limits?: string;
  /** What it does here, or why it is ignored or refused. */
  readonly why: string;
  /** A value a test sends: refused with a 400 naming the field, or (ignored) changing nothing the sidecar is sent. */
  readonly sample?: unknown;
}

export interface FieldRow<S extends z.ZodType | undefined = z.ZodType | undefined> {
  readonly fate: Fate;
  /** How the body's field is checked; undefined for a field nothing reads (left out of the parsed body). */
  readonly schema: S;
  /** Its documentation; false where `DOCS` is (docs-text.ts). */
  readonly doc: FieldDoc | false;
  /** Writes the field's value (sent and not null) into the request being built; fields mapped with others have none. */
  write?(value: S extends z.ZodType ? NonNullable<z.output<S>> : never, draft: RequestDraft): void;
}

export type FieldTable = Readonly<Record<string, FieldRow>>;

type Row<S extends z.ZodType> = Omit<FieldRow<S>, "fate" | "schema">;

/** A field this server honours. */
export function implemented<S extends z.ZodType>(schema: S, row: Row<S>): FieldRow<S> {
  return { ...row, fate: "implemented", schema };
}

/**
 * A field accepted and left out, only where that cannot change the answer; `schema` when the body keeps it (echoed, or
 * a hint).
 */
export function ignored<S extends z.ZodType | undefined = undefined>(doc: FieldDoc | false, schema?: S): FieldRow<S> {
  return { fate: "ignored", schema: schema as S, doc };
}

/**
 * A field refused with a 400 naming it: whenever it is set (null and absent are fine), with
 * `check` the 400's message; or by the schema `check` (some values refused, or the protocol's
 * checks refusing it with a message naming the other fields involved).
 */
export function refused(doc: FieldDoc | false, check: string | z.ZodType): FieldRow<z.ZodType> {
  return { fate: "refused", schema: typeof check === "string" ? refusedField(check) : check, doc };
}

/** A field refused whenever it is set (null and absent are fine), with why. */
export const refusedField = (why: string) =>
  z
    .unknown()
    .optional()
    .refine((value) => value == null, { error: why });

type Shape<T extends FieldTable> = {
  [K in keyof T as T[K]["schema"] extends z.ZodType ? K : never]: Exclude<T[K]["schema"], undefined>;
};

/** The zod shape of a table: every row that has a schema, in the table's order. */
export function shapeOf<T extends FieldTable>(table: T): Shape<T> {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, row] of Object.entries(table)) if (row.schema !== undefined) shape[name] = row.schema;
  return shape as Shape<T>;
}

/** Writes every field of `body` whose row maps it alone, in the table's order. */
export function writeFields(table: FieldTable, body: object, draft: RequestDraft): RequestDraft {
  const values = body as Readonly<Record<string, unknown>>;
  for (const [name, row] of Object.entries(table)) {
    const value = values[name];
    if (value != null && row.write !== undefined) row.write(value as never, draft);
  }
  return draft;
}

/** A row's documentation (none where `DOCS` is false). */
export function docOf(row: FieldRow): FieldDoc {
  return row.doc === false ? { why: "" } : row.doc;
}

/** A table's rows as docs/contract.md shows them. */
export function fieldDocs(table: FieldTable): { name: string; fate: Fate; doc: FieldDoc }[] {
  return Object.entries(table).map(([name, row]) => ({ name, fate: row.fate, doc: docOf(row) }));
}
