// The cross-references of deploy/kubernetes/ that no schema checks: which pods the InferencePool
// selects and on which port, where the picker is and what it reads, the sidecar kept private in
// its pod, the Secret both containers use, the route and the RBAC. Each check returns the problems
// it found ("" free): [] when the manifests agree.
import { parse } from "yaml";
import type { Manifest } from "./kubernetes-schemas.js";

type Labels = Readonly<Record<string, string>>;
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet?: { path?: string; port: number | string };
  tcpSocket?: { port: number | string };
}
export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  volumeMounts?: { name: string; mountPath: string }[];
}
interface Deployment {
  metadata: { name: string };
  spec: {
    selector: { matchLabels: Labels };
    template: {
      metadata: { labels: Labels };
      spec: {
        containers: Container[];
        serviceAccountName?: string;
        volumes?: { name: string; configMap?: { name: string } }[];
      };
    };
  };
}
interface Service {
  metadata: { name: string };
  spec: {
    selector: Labels;
    ports: { name?: string; port: number; targetPort?: number | string; appProtocol?: string }[];
  };
}
interface Pool {
  metadata: { name: string };
  spec: {
    selector: { matchLabels: Labels };
    targetPorts: { number: number }[];
    endpointPickerRef: { name: string; kind?: string; port?: { number: number } };
  };
}
interface Ref {
  group?: string;
  kind?: string;
  name: string;
}
interface Route {
  spec: { parentRefs: Ref[]; rules: { backendRefs?: Ref[] }[] };
}
interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
}
interface Plugin {
  name?: string;
  type: string;
  parameters?: Record<string, unknown>;
}
export interface PickerConfig {
  plugins: Plugin[];
  schedulingProfiles?: { name: string; plugins: { pluginRef: string }[] }[];
  dataLayer?: { sources?: { pluginRef: string; extractors?: { pluginRef: string }[] }[] };
  requestHandler?: { parsers?: { pluginRef: string }[] };
}
interface EngineConfig {
  name: string;
  queuedRequestsSpec?: string;
  runningRequestsSpec?: string;
  kvUsageSpec?: string;
  loraSpec?: string;
}

/** The manifests by role, read after their schemas passed. */
export class Cluster {
  constructor(readonly manifests: readonly Manifest[]) {}
  private all<T>(kind: string): T[] {
    return this.manifests.filter((m) => m.doc.kind === kind).map((m) => m.doc as unknown as T);
  }
  private one<T>(kind: string, name?: string): T {
    const found = this.manifests.filter(
      (m) => m.doc.kind === kind && (name === undefined || m.doc.metadata.name === name),
    );
    if (found.length !== 1)
      throw new Error(`expected one ${kind}${name === undefined ? "" : ` ${name}`}, found ${found.length}`);
    return (found[0] as Manifest).doc as unknown as T;
  }
  get pool(): Pool {
    return this.one("InferencePool");
  }
  get deployments(): Deployment[] {
    return this.all("Deployment");
  }
  get services(): Service[] {
    return this.all("Service");
  }
  /** The Deployment whose pods the pool selects (the first that matches). */
  get modelServer(): Deployment {
    return (
      this.deployments.find((d) => matches(this.pool.spec.selector.matchLabels, d.spec.template.metadata.labels)) ??
      this.one("Deployment", "llm-edge")
    );
  }
  get picker(): Deployment {
    return this.one("Deployment", this.pool.spec.endpointPickerRef.name);
  }
  get pickerService(): Service {
    return this.one("Service", this.pool.spec.endpointPickerRef.name);
  }
  get pickerContainer(): Container {
    return this.picker.spec.template.spec.containers[0] as Container;
  }
  container(name: "edge" | "sidecar"): Container {
    return this.modelServer.spec.template.spec.containers.find((c) => c.name === name) ?? { name };
  }
  get configMaps(): { metadata: { name: string }; data: Record<string, string> }[] {
    return this.all("ConfigMap");
  }
  get route(): Route {
    return this.one("HTTPRoute");
  }
  get gateway(): { metadata: { name: string } } {
    return this.one("Gateway");
  }
  get secret(): { metadata: { name: string }; stringData?: Record<string, string> } {
    return this.one("Secret");
  }
  get role(): { metadata: { name: string }; rules: Rule[] } {
    return this.one("Role");
  }
  get roleBinding(): { subjects: { kind: string; name: string }[]; roleRef: { kind: string; name: string } } {
    return this.one("RoleBinding");
  }
  get serviceAccount(): { metadata: { name: string } } {
    return this.one("ServiceAccount");
  }

  /** The picker's settings file: --config-file through its volume mount to the ConfigMap key. */
  get pickerConfig(): PickerConfig {
    return parse(this.pickerConfigText()) as PickerConfig;
  }
  pickerConfigText(): string {
    const path = flag(this.pickerContainer, "config-file") ?? "";
    const mount = (this.pickerContainer.volumeMounts ?? []).find((m) => path.startsWith(`${m.mountPath}/`));
    const volume = this.picker.spec.template.spec.volumes?.find((v) => v.name === mount?.name);
    const data = this.configMaps.find((c) => c.metadata.name === volume?.configMap?.name)?.data ?? {};
    return data[path.slice((mount?.mountPath.length ?? 0) + 1)] ?? "";
  }
  /** Every settings file of the picker's ConfigMap (the one --config-file names, and the others), by key. */
  get pickerConfigs(): Record<string, PickerConfig> {
    const volume = this.picker.spec.template.spec.volumes?.find((v) => v.configMap !== undefined);
    const data = this.configMaps.find((c) => c.metadata.name === volume?.configMap?.name)?.data ?? {};
    return Object.fromEntries(Object.entries(data).map(([key, text]) => [key, parse(text) as PickerConfig]));
  }
  plugin(type: string): Plugin | undefined {
    return this.pickerConfig.plugins.find((p) => p.type === type);
  }
  /** The engine config the model-server pods' engine label selects. */
  get engine(): EngineConfig | undefined {
    const params = (this.plugin("core-metrics-extractor")?.parameters ?? {}) as {
      engineLabelKey?: string;
      engineConfigs?: EngineConfig[];
    };
    const label = this.modelServer.spec.template.metadata.labels[params.engineLabelKey ?? "llm-d.ai/engine-type"];
    return params.engineConfigs?.find((e) => e.name === label);
  }
}

export function matches(selector: Labels, labels: Labels): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}
export function env(container: Container, name: string): string | undefined {
  return container.env?.find((e) => e.name === name)?.value;
}
export function port(container: Container, name: string): number | undefined {
  return container.ports?.find((p) => p.name === name)?.containerPort;
}
/** `--name=value` or `--name value` among the container's args. */
export function flag(container: Container, name: string): string | undefined {
  const args = container.args ?? [];
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i === -1) return undefined;
  const arg = args[i] as string;
  return arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : args[i + 1];
}
function check(problems: string[], ok: boolean, problem: string): void {
  if (!ok) problems.push(problem);
}

/** The pool selects the model-server pods (and no other), on the edge's port, and names the picker. */
export function poolProblems(c: Cluster): string[] {
  const p: string[] = [];
  const { selector, targetPorts, endpointPickerRef: ref } = c.pool.spec;
  const selected = c.deployments.filter((d) => matches(selector.matchLabels, d.spec.template.metadata.labels));
  check(
    p,
    selected.length === 1 && selected[0] === c.modelServer,
    `the pool's selector ${JSON.stringify(selector.matchLabels)} must match the model-server pods and only them ` +
      `(matches ` +
      `${selected.map((d) => d.metadata.name).join(", ") || "none"})`,
  );
  check(
    p,
    matches(c.modelServer.spec.selector.matchLabels, c.modelServer.spec.template.metadata.labels),
    "the model-server Deployment's selector must match its pod labels",
  );
  const edgePort = port(c.container("edge"), "http");
  check(
    p,
    targetPorts.length === 1 &&
      targetPorts[0]?.number === edgePort &&
      Number(env(c.container("edge"), "EDGE_PORT")) === edgePort,
    `targetPorts ${JSON.stringify(targetPorts)} must be the edge's port (containerPort ${edgePort}, EDGE_PORT ` +
      `${env(c.container("edge"), "EDGE_PORT")})`,
  );
  check(p, new Set(targetPorts.map((t) => t.number)).size === targetPorts.length, "targetPorts must be unique");
  const servicePort = c.pickerService.spec.ports.find((sp) => sp.port === ref.port?.number);
  check(
    p,
    (ref.kind ?? "Service") === "Service" && servicePort !== undefined,
    `endpointPickerRef must name the picker's Service and one of its ports (${ref.name}:${ref.port?.number})`,
  );
  const grpc = c.pickerContainer.ports?.find(
    (cp) => cp.name === servicePort?.targetPort || cp.containerPort === servicePort?.targetPort,
  );
  check(
    p,
    grpc !== undefined && String(grpc.containerPort) === flag(c.pickerContainer, "grpc-port"),
    "the picker Service's ext-proc port must lead to the container's --grpc-port",
  );
  check(
    p,
    matches(c.pickerService.spec.selector, c.picker.spec.template.metadata.labels),
    "the picker Service must select the picker's pods",
  );
  check(
    p,
    flag(c.pickerContainer, "pool-name") === c.pool.metadata.name &&
      flag(c.pickerContainer, "pool-group") === "inference.networking.k8s.io",
    "the picker's --pool-name and --pool-group must name the pool",
  );
  return p;
}

/**
 * The picker scrapes the sidecar's metrics port, reads the engine the pods are labelled with, and scores by queue, KV
 * cache and prefix.
 */
export function pickerProblems(c: Cluster): string[] {
  const p: string[] = [];
  check(p, c.pickerConfigText() !== "", "the picker's --config-file must be a key of the ConfigMap mounted there");
  if (c.pickerConfigText() === "") return p;
  const source = (c.plugin("metrics-data-source")?.parameters ?? {}) as {
    port?: number;
    path?: string;
    scheme?: string;
  };
  const sidecar = c.container("sidecar");
  check(
    p,
    source.port !== undefined &&
      source.port === port(sidecar, "metrics") &&
      source.port === Number(env(sidecar, "METRICS_PORT")),
    `the picker must scrape the sidecar's metrics port (scrapes ${source.port}; containerPort ` +
      `${port(sidecar, "metrics")}, ` +
      `METRICS_PORT ${env(sidecar, "METRICS_PORT")})`,
  );
  check(
    p,
    env(sidecar, "METRICS_HOST") === "0.0.0.0" &&
      (source.path ?? "/metrics") === "/metrics" &&
      (source.scheme ?? "http") === "http",
    "the sidecar's metrics port must listen on the pod's address and be read at http /metrics",
  );
  const extractor = (c.plugin("core-metrics-extractor")?.parameters ?? {}) as { defaultEngine?: string };
  check(
    p,
    c.engine !== undefined && extractor.defaultEngine === c.engine.name,
    "the model-server pods' engine label must name an engineConfig (and be the default engine)",
  );
  const config = c.pickerConfig;
  const names = new Set(config.plugins.map((pl) => pl.name ?? pl.type));
  const refs = [
    ...(config.schedulingProfiles ?? []).flatMap((s) => s.plugins.map((x) => x.pluginRef)),
    ...(config.dataLayer?.sources ?? []).flatMap((s) => [s.pluginRef, ...(s.extractors ?? []).map((e) => e.pluginRef)]),
    ...(config.requestHandler?.parsers ?? []).map((x) => x.pluginRef),
  ];
  for (const ref of refs) check(p, names.has(ref), `pluginRef ${ref} names no plugin`);
  const profile = new Set((config.schedulingProfiles?.[0]?.plugins ?? []).map((x) => x.pluginRef));
  for (const scorer of ["queue-scorer", "kv-cache-utilization-scorer", "prefix-cache-scorer"])
    check(p, profile.has(scorer), `the scheduling profile must use ${scorer}`);
  const parsers = (config.requestHandler?.parsers ?? []).map(
    (x) => config.plugins.find((pl) => (pl.name ?? pl.type) === x.pluginRef)?.type,
  );
  check(
    p,
    parsers.join(" ") === "openai-parser anthropic-parser passthrough-parser",
    `the parsers must read OpenAI and Anthropic bodies and pass any other path through, last (${parsers.join(" ")})`,
  );
  return p;
}

/** The sidecar is reachable only from its pod's edge, with the token from one Secret. */
export function podProblems(c: Cluster): string[] {
  const p: string[] = [];
  const [edge, sidecar] = [c.container("edge"), c.container("sidecar")];
  check(p, env(sidecar, "SIDECAR_HOST") === "127.0.0.1", "the sidecar must bind 127.0.0.1 (SIDECAR_HOST)");
  check(
    p,
    env(edge, "SIDECAR_URL") === `http://127.0.0.1:${env(sidecar, "SIDECAR_PORT")}`,
    "the edge's SIDECAR_URL must be the sidecar's loopback port",
  );
  const sidecarPort = Number(env(sidecar, "SIDECAR_PORT"));
  check(
    p,
    !(sidecar.ports ?? []).some((cp) => cp.containerPort === sidecarPort) &&
      !c.services.some((s) => s.spec.ports.some((sp) => sp.targetPort === sidecarPort)),
    "the sidecar's gRPC port must not be exposed",
  );
  const secretRefs = [edge, sidecar].flatMap((ct) =>
    (ct.env ?? []).flatMap((e) =>
      e.valueFrom?.secretKeyRef ? [{ container: ct.name, ...e.valueFrom.secretKeyRef, env: e.name }] : [],
    ),
  );
  const tokens = secretRefs.filter((r) => r.env === "SIDECAR_TOKEN");
  check(
    p,
    tokens.length === 2 && tokens[0]?.name === tokens[1]?.name && tokens[0]?.key === tokens[1]?.key,
    "both containers must read SIDECAR_TOKEN from the same Secret key",
  );
  check(
    p,
    secretRefs.every((r) => r.name === c.secret.metadata.name && c.secret.stringData?.[r.key] !== undefined),
    `every secretKeyRef must be a key of the Secret ${c.secret.metadata.name}`,
  );
  const http = (pr: Probe | undefined): string => `${pr?.httpGet?.path} ${pr?.httpGet?.port}`;
  check(
    p,
    http(edge.readinessProbe) === "/health http" && edge.livenessProbe?.tcpSocket?.port === "http",
    "the edge must be ready on GET /health and alive on its port",
  );
  check(
    p,
    [sidecar.startupProbe, sidecar.readinessProbe, sidecar.livenessProbe].every(
      (pr) => http(pr) === "/healthz metrics",
    ),
    "the sidecar's probes must be GET /healthz on its metrics port",
  );
  return p;
}

/** The route leads the Gateway to the pool; the picker's account may read pools and pods. */
export function routeAndRbacProblems(c: Cluster): string[] {
  const p: string[] = [];
  const backends = c.route.spec.rules.flatMap((r) => r.backendRefs ?? []);
  check(
    p,
    backends.length > 0 &&
      backends.every(
        (b) =>
          b.group === "inference.networking.k8s.io" && b.kind === "InferencePool" && b.name === c.pool.metadata.name,
      ),
    "every backendRef must be the InferencePool",
  );
  check(
    p,
    c.route.spec.parentRefs.some((r) => (r.kind ?? "Gateway") === "Gateway" && r.name === c.gateway.metadata.name),
    "the route's parentRefs must name the Gateway",
  );
  const account = c.picker.spec.template.spec.serviceAccountName;
  check(
    p,
    account === c.serviceAccount.metadata.name &&
      c.roleBinding.subjects.some((s) => s.kind === "ServiceAccount" && s.name === account) &&
      c.roleBinding.roleRef.kind === "Role" &&
      c.roleBinding.roleRef.name === c.role.metadata.name,
    "the picker's ServiceAccount must be bound to the Role",
  );
  const grants = (group: string, resource: string): boolean =>
    c.role.rules.some(
      (r) =>
        (r.apiGroups ?? []).includes(group) &&
        (r.resources ?? []).includes(resource) &&
        ["get", "watch", "list"].every((v) => r.verbs.includes(v)),
    );
  check(
    p,
    grants("inference.networking.k8s.io", "inferencepools") && grants("", "pods"),
    "the Role must let the picker get, watch and list inferencepools and pods",
  );
  return p;
}

export function allProblems(c: Cluster): string[] {
  return [...poolProblems(c), ...pickerProblems(c), ...podProblems(c), ...routeAndRbacProblems(c)];
}

/**
 * The precise prefix-cache settings (a settings file with `precise-prefix-cache-producer`) read the sidecar's KV-cache
 * events where it publishes them: its port and replay port, its block size, and a topic naming the pod by its
 * address and the pool's target port, as the picker knows it.
 */
export function kvEventsProblems(c: Cluster): string[] {
  const p: string[] = [];
  const sidecar = c.container("sidecar");
  const portOf = (value: string | undefined): number => Number(/^tcp:\/\/\*:(\d+)$/.exec(value ?? "")?.[1]);
  const [events, replay] = [portOf(env(sidecar, "KV_EVENTS")), portOf(env(sidecar, "KV_EVENTS_REPLAY"))];
  check(p, events === port(sidecar, "kv-events"), `KV_EVENTS (port ${events}) must bind the kv-events containerPort`);
  check(p, replay === port(sidecar, "kv-replay"), `KV_EVENTS_REPLAY (port ${replay}) must bind the kv-replay port`);
  const target = c.pool.spec.targetPorts?.[0]?.number;
  check(p, env(sidecar, "KV_EVENTS_POD") === `$(POD_IP):${target}`, "KV_EVENTS_POD must be $(POD_IP):<target port>");
  const podIp = (sidecar.env ?? []).findIndex((e) => e.name === "POD_IP");
  const pod = (sidecar.env ?? []).findIndex((e) => e.name === "KV_EVENTS_POD");
  check(p, podIp >= 0 && podIp < pod, "POD_IP must come before KV_EVENTS_POD, which refers to it");
  const precise = Object.entries(c.pickerConfigs).filter(([, config]) =>
    config.plugins.some((pl) => pl.type === "precise-prefix-cache-producer"),
  );
  check(p, precise.length > 0, "a picker settings file must use precise-prefix-cache-producer");
  for (const [key, config] of precise) {
    const producer = config.plugins.find((pl) => pl.type === "precise-prefix-cache-producer")?.parameters as {
      tokenProcessorConfig?: { blockSizeTokens?: number };
      kvEventsConfig?: {
        topicFilter?: string;
        podDiscoveryConfig?: { socketPort?: number; replaySocketPort?: number };
      };
    };
    const discovery = producer.kvEventsConfig?.podDiscoveryConfig;
    check(p, discovery?.socketPort === events, `${key}: socketPort must be the sidecar's KV_EVENTS port`);
    check(p, discovery?.replaySocketPort === replay, `${key}: replaySocketPort must be its KV_EVENTS_REPLAY port`);
    const blockSize = Number(env(sidecar, "KV_EVENTS_BLOCK_SIZE") ?? "16");
    check(
      p,
      producer.tokenProcessorConfig?.blockSizeTokens === blockSize,
      `${key}: blockSizeTokens must be ${blockSize}`,
    );
    check(p, "kv@".startsWith(producer.kvEventsConfig?.topicFilter ?? "kv@"), `${key}: topicFilter must match kv@`);
    const scorer = config.plugins.find((pl) => pl.type === "prefix-cache-scorer")?.parameters ?? {};
    check(p, scorer.prefixMatchInfoProducerName === "precise-prefix-cache-producer", `${key}: the scorer must read it`);
    const wired = (config.dataLayer?.sources ?? []).some(
      (s) =>
        config.plugins.find((pl) => (pl.name ?? pl.type) === s.pluginRef)?.type === "endpoint-notification-source" &&
        (s.extractors ?? []).some((e) => e.pluginRef === "precise-prefix-cache-producer"),
    );
    check(p, wired, `${key}: endpoint-notification-source must feed precise-prefix-cache-producer (dataLayer)`);
  }
  return p;
}

/**
 * The token-producer of every settings file that has one asks the model-server pods' edges for token ids: its
 * `vllm.url` is `http://<Service>:<port>` of a Service that selects those pods and sends that port to the edge's
 * `render` containerPort, which is its `RENDER_PORT`, bound on an address the picker reaches (`EDGE_HOST` 0.0.0.0).
 */
export function renderProblems(c: Cluster): string[] {
  const p: string[] = [];
  const edge = c.container("edge");
  const renderPort = port(edge, "render");
  check(p, renderPort !== undefined, "the edge must have a containerPort named render");
  check(p, env(edge, "RENDER_PORT") === String(renderPort), `RENDER_PORT must be the render port (${renderPort})`);
  check(p, env(edge, "EDGE_HOST") === "0.0.0.0", "EDGE_HOST must be 0.0.0.0, so the picker reaches RENDER_PORT");
  const producers = Object.entries(c.pickerConfigs).flatMap(([key, config]) =>
    config.plugins.filter((pl) => pl.type === "token-producer").map((pl) => [key, pl.parameters ?? {}] as const),
  );
  check(p, producers.length > 0, "a picker settings file must have a token-producer");
  for (const [key, parameters] of producers) {
    const url = (parameters["vllm"] as { url?: string } | undefined)?.url ?? "";
    const [, host = "", portText = "80"] = /^http:\/\/([^:/]+)(?::(\d+))?$/.exec(url) ?? [];
    const service = c.services.find((s) => s.metadata.name === host);
    const servicePort = service?.spec.ports.find((sp) => sp.port === Number(portText));
    const reachesPods =
      service !== undefined && matches(service.spec.selector, c.modelServer.spec.template.metadata.labels);
    check(p, reachesPods, `${key}: vllm.url ${url} must name a Service of the model-server pods`);
    const target = servicePort?.targetPort;
    const targetNumber = typeof target === "string" ? port(edge, target) : (target ?? servicePort?.port);
    check(p, targetNumber === renderPort, `${key}: vllm.url ${url} must reach the edge's render port ${renderPort}`);
  }
  return p;
}
