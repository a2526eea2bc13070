// The reply's form: OpenAI's `response_format` (chat, completions) and the Responses API's
// `text.format`, as the proto's OutputConstraint. The sidecar enforces it with a grammar, so a
// JSON reply always parses (`strict` is accepted either way: the grammar is always strict).
import * as z from "zod";
import { DOCS } from "../../fields/docs-text.js";
import { implemented } from "../../fields/field-table.js";
import { formatConstraint as toConstraint, type ConstraintInit } from "../../fields/output-constraint.js";

const jsonSchemaBody = {
  name: z.string().nullish(),
  description: z.string().nullish(),
  schema: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
};

/** Chat completions / completions: `{type: "json_schema", json_schema: {name, schema, strict}}`. */
export const responseFormatField = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("text") }),
    z.object({ type: z.literal("json_object") }),
    z.object({ type: z.literal("json_schema"), json_schema: z.object(jsonSchemaBody) }),
  ])
  .nullish();

/** Responses: `text.format = {type: "json_schema", name, schema, strict}`. */
export const textFormatField = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("text") }),
    z.object({ type: z.literal("json_object") }),
    z.object({ type: z.literal("json_schema"), ...jsonSchemaBody }),
  ])
  .nullish();

export function responseFormatConstraint(
  format: z.output<typeof responseFormatField>,
  grammar?: string | null,
): ConstraintInit | undefined {
  return toConstraint(
    format?.type === "json_schema" ? { type: "json_schema", schema: format.json_schema.schema } : format,
    grammar,
  );
}

export function textFormatConstraint(format: z.output<typeof textFormatField>): ConstraintInit | undefined {
  return toConstraint(format);
}

/** `response_format` as a row of the chat and completions field tables (edge/fields/field-table.ts). */
export const responseFormatRow = implemented(responseFormatField, {
  doc: DOCS && { proto: "GenerateRequest.constraint", absent: "free text", why: "JSON object or schema, by grammar" },
  write: (value, draft) => {
    draft.request.constraint = responseFormatConstraint(value);
  },
});
