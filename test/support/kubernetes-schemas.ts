// Offline validation of deploy/kubernetes/ against the vendored schemas (test/vendor/kubernetes/):
// Kubernetes v1.36 definitions for the built-in kinds, the InferencePool and Gateway API CRDs'
// v1 schemas, and the endpoint picker's settings. Validation is strict, as `kubectl apply` is by
// default: a field no schema names is an error (an object without `additionalProperties` is
// closed unless it says x-kubernetes-preserve-unknown-fields). CEL rules
// (x-kubernetes-validations) are not evaluated; test/deploy/kubernetes.test.ts checks the ones
// the manifests touch.
import { readFileSync, readdirSync } from "node:fs";
import { Ajv, type ValidateFunction } from "ajv";
import { parse, parseAllDocuments } from "yaml";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const MANIFESTS_DIR = new URL("../../deploy/kubernetes/", import.meta.url);
const VENDOR = new URL("../vendor/kubernetes/", import.meta.url);

/** One YAML document of a manifest file. */
export interface Manifest {
  readonly file: string;
  readonly doc: {
    readonly apiVersion: string;
    readonly kind: string;
    readonly metadata: { readonly name: string };
  } & Record<string, unknown>;
}

/** Every document of every manifest (kustomization.yaml aside), in file order. */
export function loadManifests(): Manifest[] {
  const files = readdirSync(MANIFESTS_DIR)
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .sort();
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(new URL(file, MANIFESTS_DIR), "utf8")).map((document) => {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors.map((e) => e.message).join("; ")}`);
      return { file, doc: document.toJSON() as Manifest["doc"] };
    }),
  );
}

function vendored(name: string): Json {
  const text = readFileSync(new URL(name, VENDOR), "utf8");
  return name.endsWith(".json") ? (JSON.parse(text) as Json) : (parse(text) as Json);
}

/** Closes open objects (strict field validation) and reads Kubernetes' special string formats. */
function strict(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== "object") return schema;
  if (schema.format === "int-or-string") return { type: ["integer", "string"] };
  const out: { [key: string]: Json } = Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [k, k === "properties" ? mapValues(v, strict) : strict(v)]),
  );
  const open = schema["x-kubernetes-preserve-unknown-fields"] === true || "additionalProperties" in schema;
  if (schema.properties !== undefined && !open) out.additionalProperties = false;
  return out;
}

function mapValues(value: Json, f: (v: Json) => Json): Json {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, f(v)]));
}

/** Kubernetes' definitions, strict, with the two scalar types the v2 spec writes as strings. */
function kubernetesDefinitions(): { [key: string]: Json } {
  const { definitions } = vendored("kubernetes-v1.36-definitions.json") as { definitions: { [key: string]: Json } };
  const out = mapValues(definitions, strict) as { [key: string]: Json };
  out["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] = { type: ["integer", "string"] };
  out["io.k8s.apimachinery.pkg.api.resource.Quantity"] = { type: ["string", "number"] };
  return out;
}

const OBJECT_META = { $ref: "k8s#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" };

/** A CRD's v1 schema with apiVersion and kind fixed and metadata checked as ObjectMeta. */
function crdSchema(schema: Json, apiVersion: string, kind: string): Json {
  const s = strict(schema) as { properties: { [key: string]: Json } } & { [key: string]: Json };
  return {
    ...s,
    required: ["apiVersion", "kind", "metadata", "spec"],
    properties: { ...s.properties, apiVersion: { const: apiVersion }, kind: { const: kind }, metadata: OBJECT_META },
  };
}

/** Validators by "apiVersion kind". */
export function manifestValidators(): Map<string, ValidateFunction> {
  const ajv = new Ajv({ allErrors: true, strict: false, logger: false });
  for (const f of ["int32", "int64"])
    ajv.addFormat(f, { type: "number", validate: (n: number) => Number.isInteger(n) });
  for (const f of ["double", "byte", "date-time"]) ajv.addFormat(f, () => true);
  const definitions = kubernetesDefinitions();
  ajv.addSchema({ definitions }, "k8s");
  const validators = new Map<string, ValidateFunction>();
  for (const [name, definition] of Object.entries(definitions)) {
    const gvks =
      (definition as { "x-kubernetes-group-version-kind"?: { group: string; version: string; kind: string }[] })[
        "x-kubernetes-group-version-kind"
      ] ?? [];
    for (const { group, version, kind } of gvks) {
      const apiVersion = group === "" ? version : `${group}/${version}`;
      validators.set(
        `${apiVersion} ${kind}`,
        ajv.compile({
          allOf: [{ $ref: `k8s#/definitions/${name}` }],
          required: ["apiVersion", "kind", "metadata"],
          properties: { apiVersion: { const: apiVersion }, kind: { const: kind } },
        }),
      );
    }
  }
  const crd = parse(readFileSync(new URL("inference.networking.k8s.io_inferencepools.yaml", VENDOR), "utf8")) as {
    spec: { versions: { name: string; schema: { openAPIV3Schema: Json } }[] };
  };
  const pool = crd.spec.versions.find((v) => v.name === "v1")?.schema.openAPIV3Schema ?? null;
  validators.set(
    "inference.networking.k8s.io/v1 InferencePool",
    ajv.compile(crdSchema(pool, "inference.networking.k8s.io/v1", "InferencePool") as object),
  );
  validators.set(
    "gateway.networking.k8s.io/v1 Gateway",
    ajv.compile(
      crdSchema(vendored("gateway-api-v1.6.1-gateway.json"), "gateway.networking.k8s.io/v1", "Gateway") as object,
    ),
  );
  validators.set(
    "gateway.networking.k8s.io/v1 HTTPRoute",
    ajv.compile(
      crdSchema(vendored("gateway-api-v1.6.1-httproute.json"), "gateway.networking.k8s.io/v1", "HTTPRoute") as object,
    ),
  );
  return validators;
}

/** The errors of one document, as "path message" lines; [] when it is valid. */
export function validateManifest(validators: Map<string, ValidateFunction>, doc: unknown): string[] {
  const { apiVersion, kind } = (doc ?? {}) as { apiVersion?: unknown; kind?: unknown };
  const validate = validators.get(`${String(apiVersion)} ${String(kind)}`);
  if (validate === undefined) return [`no schema for apiVersion ${String(apiVersion)} kind ${String(kind)}`];
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`);
}

/** The endpoint picker's settings schema (written from llm-d-router's Go types; README.md). */
export function pickerConfigValidator(): ValidateFunction {
  return new Ajv({ allErrors: true, strict: false, logger: false }).compile(
    vendored("endpointpickerconfig.schema.json") as object,
  );
}
