// Rebuilds the vendored schema files of this folder from the upstream files named in README.md:
//   npx tsx test/vendor/kubernetes/extract.ts <swagger.json.unprocessed> <gateways CRD> <httproutes CRD>
// It keeps only what the manifests need (the definitions reachable from the kinds below, the v1
// schema of each CRD) and drops `description` fields; every validation keyword stays unchanged.
import { readFileSync, writeFileSync } from "node:fs";
import { parse } from "yaml";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The Kubernetes definitions the manifests' kinds are built from. */
export const KUBERNETES_KINDS = [
  "io.k8s.api.apps.v1.Deployment",
  "io.k8s.api.core.v1.ConfigMap",
  "io.k8s.api.core.v1.Secret",
  "io.k8s.api.core.v1.Service",
  "io.k8s.api.core.v1.ServiceAccount",
  "io.k8s.api.rbac.v1.Role",
  "io.k8s.api.rbac.v1.RoleBinding",
];

function withoutDescriptions(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutDescriptions);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== "description").map(([k, v]) => [k, withoutDescriptions(v)]));
}

/** The definitions reachable from `roots` through `$ref`. */
function reachable(definitions: Record<string, Json>, roots: readonly string[]): Record<string, Json> {
  const seen = new Set<string>();
  const visit = (value: Json): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        if (k === "$ref" && typeof v === "string") add(v.replace("#/definitions/", ""));
        else visit(v);
      }
    }
  };
  const add = (name: string): void => {
    if (seen.has(name)) return;
    const definition = definitions[name];
    if (definition === undefined) throw new Error(`no definition ${name}`);
    seen.add(name);
    visit(definition);
  };
  roots.forEach(add);
  return Object.fromEntries([...seen].sort().map((name) => [name, withoutDescriptions(definitions[name] as Json)]));
}

function crdV1Schema(file: string): Json {
  const crd = parse(readFileSync(file, "utf8")) as { spec: { versions: { name: string; schema: { openAPIV3Schema: Json } }[] } };
  const v1 = crd.spec.versions.find((v) => v.name === "v1");
  if (v1 === undefined) throw new Error(`${file} has no v1`);
  return withoutDescriptions(v1.schema.openAPIV3Schema);
}

function main(): void {
  const [swagger, gateways, httproutes] = process.argv.slice(2);
  if (swagger === undefined || gateways === undefined || httproutes === undefined) throw new Error("usage: extract.ts <swagger.json.unprocessed> <gateways CRD> <httproutes CRD>");
  const here = new URL("./", import.meta.url);
  const definitions = (JSON.parse(readFileSync(swagger, "utf8")) as { definitions: Record<string, Json> }).definitions;
  const write = (name: string, value: Json): void => writeFileSync(new URL(name, here), `${JSON.stringify(value, null, 1)}\n`);
  write("kubernetes-v1.36-definitions.json", { definitions: reachable(definitions, KUBERNETES_KINDS) });
  write("gateway-api-v1.6.1-gateway.json", crdV1Schema(gateways));
  write("gateway-api-v1.6.1-httproute.json", crdV1Schema(httproutes));
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split("/").pop() ?? "")) main();
