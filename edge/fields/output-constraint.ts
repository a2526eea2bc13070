// The reply's form as the proto's OutputConstraint, from any protocol's format field (OpenAI's
// `response_format` / `text.format`, Anthropic's `output_config.format`). The sidecar enforces it
// with a grammar, so a JSON reply always parses.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { OutputConstraintSchema } from "../../proto/gen/inference/v1/inference_pb.js";

export type ConstraintInit = MessageInitShape<typeof OutputConstraintSchema>;

export type Format =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; schema?: Record<string, unknown> | null | undefined };

/** A raw GBNF `grammar` wins; then the format; text (or none) means no constraint. */
export function formatConstraint(
  format: Format | null | undefined,
  grammar?: string | null,
): ConstraintInit | undefined {
  if (grammar != null && grammar !== "") return { kind: { case: "grammar", value: grammar } };
  switch (format?.type) {
    case undefined:
    case "text":
      return undefined;
    case "json_object":
      return { kind: { case: "jsonObject", value: true } };
    case "json_schema":
      // A json_schema format without a schema still asks for JSON.
      return format.schema == null
        ? { kind: { case: "jsonObject", value: true } }
        : { kind: { case: "jsonSchema", value: JSON.stringify(format.schema) } };
  }
}
