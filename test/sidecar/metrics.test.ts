// The sidecar's /metrics parse as Prometheus text (HELP and TYPE on every family), follow what
// generation did, and carry the queue, running and KV-cache gauges under the names an Inference
// Gateway's endpoint picker reads.
import parsePrometheusTextFormat, { type PrometheusFamily } from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LOOKUP_DRAFT } from "../../sidecar/engine/llama/prompt-lookup.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, collect, startTestSidecar } from "../support/sidecar.js";

async function scrape(url: string): Promise<Map<string, PrometheusFamily>> {
  const response = await fetch(`${url}/metrics`);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusTextFormat(await response.text());
  return new Map(families.map((family) => [family.name, family]));
}

const value = (families: Map<string, PrometheusFamily>, name: string, labels?: Record<string, string>): number => {
  const family = families.get(name);
  const sample = family?.metrics.find(
    (m) => labels === undefined || Object.entries(labels).every(([k, v]) => m.labels?.[k] === v),
  );
  return Number(sample?.value);
};

describe("GET /metrics", () => {
  let sidecar: RunningSidecar;
  beforeAll(async () => {
    sidecar = await startTestSidecar({ sequences: 2, contextSize: 256 });
  });
  afterAll(async () => {
    await sidecar.stop();
  });

  it("is Prometheus text whose counters and histograms follow a generation", async () => {
    const before = await scrape(sidecar.url);
    for (const family of before.values()) {
      expect(family.help, family.name).not.toBe("");
      expect(["COUNTER", "GAUGE", "HISTOGRAM"], family.name).toContain(family.type);
    }
    const events = await collect(
      clientsFor(sidecar.url).grpc.generate({ input: { case: "prompt", value: "Once upon a time" }, maxTokens: 5 }),
    );
    const finish = events.at(-1);
    expect(finish?.case).toBe("finish");
    const promptTokens = finish?.case === "finish" ? finish.value.promptTokens : 0;
    const after = await scrape(sidecar.url);
    expect(value(after, "sidecar_tokens_generated_total") - value(before, "sidecar_tokens_generated_total")).toBe(5);
    expect(value(after, "sidecar_prompt_tokens_total") - value(before, "sidecar_prompt_tokens_total")).toBe(
      promptTokens,
    );
    expect(
      value(after, "sidecar_requests_total", { outcome: "completed" }) -
        value(before, "sidecar_requests_total", { outcome: "completed" }),
    ).toBe(1);
    // Nothing another sequence held was copied for this short prompt (decode/prefix-copy.ts).
    for (const name of ["sidecar_prefix_copies_total", "sidecar_prefix_copied_tokens_total"]) {
      expect(after.get(name)?.type, name).toBe("COUNTER");
      expect(value(after, name), name).toBe(0);
    }
    for (const name of [
      "sidecar_time_to_first_token_seconds",
      "sidecar_time_per_output_token_seconds",
      "sidecar_queue_wait_seconds",
    ]) {
      const count = (families: Map<string, PrometheusFamily>) => Number(families.get(name)?.metrics[0]?.count);
      expect(after.get(name)?.type, name).toBe("HISTOGRAM");
      expect(count(after) - count(before), name).toBe(1);
    }
  });

  it("reports running requests and KV-cache use while a generation runs, under the gateway's names", async () => {
    const abort = new AbortController();
    const stream = clientsFor(sidecar.url).grpc.generate(
      { input: { case: "prompt", value: "Let us sing. Sing" }, maxTokens: 200 },
      { signal: abort.signal },
    );
    const iterator = stream[Symbol.asyncIterator]();
    for (let i = 0; i < 6; i++) await iterator.next(); // start and a few tokens
    const during = await scrape(sidecar.url);
    abort.abort();
    await iterator.return?.();
    expect(value(during, "vllm:num_requests_running")).toBe(1);
    expect(value(during, "vllm:num_requests_waiting")).toBe(0);
    for (const name of ["vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc", "sidecar_kv_cache_usage_ratio"]) {
      expect(during.get(name)?.type).toBe("GAUGE");
      expect(value(during, name), name).toBeGreaterThan(0);
      expect(value(during, name), name).toBeLessThan(1);
    }
  });

  it(
    "counts, per model, the tokens prompt lookup drafted and those the reply took, under its names and vLLM's, as " +
      "ListModels does",
    async () => {
      const before = await scrape(sidecar.url);
      // Seeded: a seeded reply drafts by its own tokens alone, so what it drafts hangs on no timing.
      const request = {
        input: { case: "prompt" as const, value: "Let us sing. Sing" },
        maxTokens: 40,
        sampling: { seed: 1 },
      };
      const events = await collect(clientsFor(sidecar.url).grpc.generate(request));
      expect(events.at(-1)?.case).toBe("finish");
      const after = await scrape(sidecar.url);
      const delta = (name: string, labels: Record<string, string>) =>
        value(after, name, labels) - (value(before, name, labels) || 0);
      const drafted = delta("sidecar_model_draft_tokens_total", { model: "scripted" });
      const accepted = delta("sidecar_model_draft_accepted_tokens_total", { model: "scripted" });
      // A reply of " la" 40 times drafts its own loop: most tokens come from drafts.
      expect(accepted).toBeGreaterThanOrEqual(30);
      expect(drafted).toBeGreaterThanOrEqual(accepted);
      expect(delta("vllm:spec_decode_num_draft_tokens_total", { model_name: "scripted" })).toBe(drafted);
      expect(delta("vllm:spec_decode_num_accepted_tokens_total", { model_name: "scripted" })).toBe(accepted);
      const { models } = await clientsFor(sidecar.url).grpc.listModels({});
      const model = models.find((m) => m.id === "scripted");
      expect([model?.speculation, model?.draftMax]).toEqual(["lookup", DEFAULT_LOOKUP_DRAFT]);
      expect(Number(model?.draftAcceptedTokens)).toBe(
        value(after, "sidecar_model_draft_accepted_tokens_total", { model: "scripted" }),
      );
      expect(Number(model?.draftTokens)).toBe(value(after, "sidecar_model_draft_tokens_total", { model: "scripted" }));
    },
  );
});
