// deploy/kubernetes/ checked offline: every document against the published schemas vendored in
// test/vendor/kubernetes/ (strictly: an unknown field fails, as with kubectl's default), the endpoint
// picker's settings against the schema written from its Go types, and the references between the
// documents; the picker's metric names against what a real sidecar serves on its metrics port.
// Mutated copies show that a broken manifest fails.
import { existsSync, readFileSync } from "node:fs";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import {
  Cluster,
  allProblems,
  podProblems,
  kvEventsProblems,
  pickerProblems,
  renderProblems,
  poolProblems,
  type Container,
} from "../support/kubernetes-references.js";
import {
  MANIFESTS_DIR,
  loadManifests,
  manifestValidators,
  pickerConfigValidator,
  validateManifest,
  type Manifest,
} from "../support/kubernetes-schemas.js";
import { startTestSidecar } from "../support/sidecar.js";

const manifests = loadManifests();
const validators = manifestValidators();
const cluster = new Cluster(manifests);

type Path = readonly (string | number)[];
/** A copy of the manifests where one document has each `[path, value]` set (undefined deletes). */
function mutated(kind: string, name: string, ...edits: readonly (readonly [Path, unknown])[]): Manifest[] {
  return manifests.map((m) => {
    if (m.doc.kind !== kind || m.doc.metadata.name !== name) return m;
    const doc = structuredClone(m.doc);
    for (const [path, value] of edits) {
      const parent = path
        .slice(0, -1)
        .reduce<unknown>((at, key) => (at as Record<string | number, unknown>)[key], doc) as Record<
        string | number,
        unknown
      >;
      const last = path[path.length - 1] as string | number;
      if (value === undefined) delete parent[last];
      else parent[last] = value;
    }
    return { file: m.file, doc };
  });
}
/** The path of the sidecar container's environment variable `name`. */
function sidecarEnv(name: string): Path {
  return containerEnv("sidecar", name);
}
/** The path of the environment variable `name` of the model server's container `container`. */
function containerEnv(container: "edge" | "sidecar", name: string): Path {
  const containers = cluster.modelServer.spec.template.spec.containers as Container[];
  const c = containers.findIndex((x) => x.name === container);
  return [
    "spec",
    "template",
    "spec",
    "containers",
    c,
    "env",
    containers[c]?.env?.findIndex((e) => e.name === name) ?? -1,
  ];
}
function doc(list: readonly Manifest[], kind: string, name: string): unknown {
  return list.find((m) => m.doc.kind === kind && m.doc.metadata.name === name)?.doc;
}

describe("deploy/kubernetes against the vendored schemas", () => {
  it("holds the model server, its pool, the picker and the route, each valid", () => {
    expect(manifests.map((m) => `${m.file}: ${m.doc.apiVersion} ${m.doc.kind} ${m.doc.metadata.name}`)).toEqual([
      "endpoint-picker.yaml: v1 ServiceAccount llm-edge-epp",
      "endpoint-picker.yaml: rbac.authorization.k8s.io/v1 Role llm-edge-epp",
      "endpoint-picker.yaml: rbac.authorization.k8s.io/v1 RoleBinding llm-edge-epp",
      "endpoint-picker.yaml: v1 ConfigMap llm-edge-epp",
      "endpoint-picker.yaml: apps/v1 Deployment llm-edge-epp",
      "endpoint-picker.yaml: v1 Service llm-edge-epp",
      "gateway.yaml: gateway.networking.k8s.io/v1 Gateway llm-edge",
      "gateway.yaml: gateway.networking.k8s.io/v1 HTTPRoute llm-edge",
      "inferencepool.yaml: inference.networking.k8s.io/v1 InferencePool llm-edge",
      "model-server.yaml: apps/v1 Deployment llm-edge",
      "model-server.yaml: v1 Service llm-edge",
      "secret.example.yaml: v1 Secret llm-edge",
    ]);
    for (const m of manifests)
      expect({ [`${m.file} ${m.doc.kind}`]: validateManifest(validators, m.doc) }).toEqual({
        [`${m.file} ${m.doc.kind}`]: [],
      });
  });

  it("has picker settings that match the EndpointPickerConfig schema", () => {
    const validate = pickerConfigValidator();
    expect([validate(cluster.pickerConfig), validate.errors ?? null]).toEqual([true, null]);
    expect(Object.keys(cluster.pickerConfigs)).toEqual(["config.yaml", "precise.yaml"]);
    for (const [key, config] of Object.entries(cluster.pickerConfigs))
      expect({ [key]: [validate(config), validate.errors ?? null] }).toEqual({ [key]: [true, null] });
  });

  it("publishes the sidecar's KV-cache events where the precise prefix-cache settings read them", () => {
    expect(kvEventsProblems(cluster)).toEqual([]);
  });

  it("points the token-producer at the edges' render port, through the Service of the model-server pods", () => {
    expect(renderProblems(cluster)).toEqual([]);
    const precise = cluster.pickerConfigs["precise.yaml"];
    const producer = precise?.plugins.find((pl) => pl.type === "token-producer");
    expect(producer?.parameters?.["vllm"]).toEqual({ url: "http://llm-edge:8000" });
    const otherPort = new Cluster(
      mutated("Deployment", "llm-edge", [[...containerEnv("edge", "RENDER_PORT"), "value"], "8001"]),
    );
    expect(renderProblems(otherPort)).toEqual(["RENDER_PORT must be the render port (8000)"]);
    const services = manifests.filter((m) => m.doc.kind === "Service" && m.doc.metadata.name === "llm-edge");
    const ports =
      (services[0]?.doc as unknown as { spec: { ports: { name: string }[] } } | undefined)?.spec.ports ?? [];
    const noRender = mutated("Service", "llm-edge", [["spec", "ports"], ports.filter((sp) => sp.name !== "render")]);
    expect(renderProblems(new Cluster(noRender))).toEqual([
      "precise.yaml: vllm.url http://llm-edge:8000 must reach the edge's render port 8000",
    ]);
  });

  it("fails a broken manifest: a wrong type, a value outside an enum, a misspelt field, an unknown kind", () => {
    const pool = doc(
      mutated(
        "InferencePool",
        "llm-edge",
        [["spec", "targetPorts"], [{ number: "8080" }]],
        [["spec", "endpointPickerRef", "failureMode"], "Open"],
      ),
      "InferencePool",
      "llm-edge",
    );
    expect(validateManifest(validators, pool)).toEqual([
      "/spec/endpointPickerRef/failureMode must be equal to one of the allowed values " +
        '{"allowedValues":["FailOpen","FailClose"]}',
      '/spec/targetPorts/0/number must be integer {"type":"integer"}',
    ]);
    const deployment = doc(
      mutated("Deployment", "llm-edge", [
        ["spec", "template", "spec", "containers", 1, "readinessProbe", "httpGet", "paht"],
        "/healthz",
      ]),
      "Deployment",
      "llm-edge",
    );
    expect(validateManifest(validators, deployment)).toEqual([
      "/spec/template/spec/containers/1/readinessProbe/httpGet must NOT have additional properties " +
        '{"additionalProperty":"paht"}',
    ]);
    const route = doc(
      mutated("HTTPRoute", "llm-edge", [["spec", "rules", 0, "backendRefs", 0, "name"], undefined]),
      "HTTPRoute",
      "llm-edge",
    );
    expect(validateManifest(validators, route)).toEqual([
      '/spec/rules/0/backendRefs/0 must have required property \'name\' {"missingProperty":"name"}',
    ]);
    expect(
      validateManifest(validators, {
        apiVersion: "inference.networking.x-k8s.io/v1alpha2",
        kind: "InferencePool",
        metadata: { name: "x" },
      }),
    ).toEqual(["no schema for apiVersion inference.networking.x-k8s.io/v1alpha2 kind InferencePool"]);
    const validate = pickerConfigValidator();
    const settings = parse(cluster.pickerConfigText()) as {
      plugins: { type: string; parameters?: Record<string, unknown> }[];
    };
    (settings.plugins[0] as { parameters: Record<string, unknown> }).parameters = {
      port: 9400,
      metricsPath: "/metrics",
    };
    expect(validate(settings)).toBe(false);
    expect(validate.errors?.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`)).toContain(
      '/plugins/0/parameters must NOT have additional properties {"additionalProperty":"metricsPath"}',
    );
  });
});

describe("deploy/kubernetes references", () => {
  it(
    "agree: pool → model-server pods on the edge's port → picker; picker → sidecar metrics port; one Secret; route " +
      "→ pool; RBAC",
    () => {
      expect(allProblems(cluster)).toEqual([]);
    },
  );

  it(
    "are found broken: a pool selecting no pod, a picker scraping another port, a container reading another " +
      "Secret",
    () => {
      expect(
        poolProblems(
          new Cluster(
            mutated("InferencePool", "llm-edge", [
              ["spec", "selector", "matchLabels", "app.kubernetes.io/name"],
              "llm-edge-typo",
            ]),
          ),
        ),
      ).toEqual([
        'the pool\'s selector {"app.kubernetes.io/name":"llm-edge-typo",' +
          '"app.kubernetes.io/component":"model-server"} must match ' +
          "the model-server pods and only them (matches none)",
      ]);
      expect(
        poolProblems(new Cluster(mutated("InferencePool", "llm-edge", [["spec", "targetPorts"], [{ number: 9400 }]]))),
      ).toEqual(['targetPorts [{"number":9400}] must be the edge\'s port (containerPort 8080, EDGE_PORT 8080)']);
      expect(
        pickerProblems(
          new Cluster(mutated("Deployment", "llm-edge", [[...sidecarEnv("METRICS_PORT"), "value"], "9401"])),
        ),
      ).toEqual([
        "the picker must scrape the sidecar's metrics port (scrapes 9400; containerPort 9400, METRICS_PORT 9401)",
      ]);
      expect(
        podProblems(
          new Cluster(
            mutated("Deployment", "llm-edge", [
              [...sidecarEnv("SIDECAR_TOKEN"), "valueFrom", "secretKeyRef", "name"],
              "other",
            ]),
          ),
        ),
      ).toEqual([
        "both containers must read SIDECAR_TOKEN from the same Secret key",
        "every secretKeyRef must be a key of the Secret llm-edge",
      ]);
    },
  );

  it("kustomization.yaml applies every manifest but the Secret example", () => {
    const kustomization = parse(readFileSync(new URL("kustomization.yaml", MANIFESTS_DIR), "utf8")) as {
      resources: string[];
    };
    expect(kustomization.resources.sort()).toEqual(
      [...new Set(manifests.map((m) => m.file))].filter((f) => f !== "secret.example.yaml").sort(),
    );
  });

  it("runs, in both containers, an entry file that the Dockerfile copies into the image", () => {
    const dockerfile = readFileSync(new URL("../../Dockerfile", import.meta.url), "utf8");
    const [edge, sidecar] = [cluster.container("edge"), cluster.container("sidecar")];
    expect([edge.command, sidecar.command]).toEqual([
      ["node", "--import", "tsx", "edge/hosts/node/main.ts"],
      ["node", "--import", "tsx", "sidecar/main.ts"],
    ]);
    expect(edge.image).toBe(sidecar.image);
    for (const file of ["edge/hosts/node/main.ts", "sidecar/main.ts"]) {
      expect(existsSync(new URL(`../../${file}`, import.meta.url))).toBe(true);
      expect(dockerfile).toContain(`COPY ${file.split("/")[0]} ${file.split("/")[0]}\n`);
    }
  });
});

describe("the picker's metric names", () => {
  let sidecar: RunningSidecar;
  beforeAll(async () => {
    sidecar = await startTestSidecar({ token: "deploy-test-token", metricsPort: 0 });
  });
  afterAll(async () => {
    await sidecar.stop();
  });

  it("are gauges that a real sidecar serves on its metrics port, without the token", async () => {
    const engine = cluster.engine;
    expect(engine).toEqual({
      name: "llm-edge",
      queuedRequestsSpec: "sidecar_queue_length",
      runningRequestsSpec: "sidecar_sequences_busy",
      kvUsageSpec: "sidecar_kv_cache_usage_ratio",
      loraSpec: "sidecar_lora_requests_info",
    });
    const response = await fetch(`http://127.0.0.1:${sidecar.metricsPort}/metrics`);
    expect(response.status).toBe(200);
    const families = parsePrometheusTextFormat(await response.text());
    const read = (name: string | undefined) =>
      families
        .filter((f) => f.name === name)
        .map((f) => ({ name: f.name, type: f.type, values: f.metrics.map((m) => m.value) }));
    expect([engine?.queuedRequestsSpec, engine?.runningRequestsSpec, engine?.kvUsageSpec].flatMap(read)).toEqual([
      { name: "sidecar_queue_length", type: "GAUGE", values: ["0"] },
      { name: "sidecar_sequences_busy", type: "GAUGE", values: ["0"] },
      { name: "sidecar_kv_cache_usage_ratio", type: "GAUGE", values: ["0"] },
    ]);
    // The LoRA info: labels name the adapters (none here); the value is the scrape's time, the newest sample wins.
    const lora = families.find((f) => f.name === engine?.loraSpec);
    expect([lora?.type, lora?.metrics.map((m) => m.labels)]).toEqual([
      "GAUGE",
      [{ running_lora_adapters: "", waiting_lora_adapters: "", max_lora: "0" }],
    ]);
    expect(Number(lora?.metrics[0]?.value)).toBeGreaterThan(Date.now() / 1000 - 60);
  });
});
