// The GenAI server metrics of the OpenTelemetry semantic conventions on the sidecar's /metrics
// (docs/decisions.md, "Traces"): three histograms with the conventions' buckets, labelled by
// operation, provider and model (and error type on a failed call), following real generations.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, collect, startTestSidecar } from "../support/sidecar.js";

const BUCKETS: Record<string, number[]> = {
  gen_ai_server_request_duration_seconds: [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
  ],
  gen_ai_server_time_to_first_token_seconds: [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
  ],
  gen_ai_server_time_per_output_token_seconds: [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5],
};

/** Prometheus labels `{a="b",c="d"}` as an object. */
const labelsOf = (text: string): Record<string, string> =>
  Object.fromEntries([...text.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));

/**
 * Each histogram's sample count by its labels, written `operation/model/error_type`; its buckets checked on the way.
 */
async function counts(url: string): Promise<Record<string, Record<string, number>>> {
  const lines = (await (await fetch(`${url}/metrics`)).text()).split("\n");
  const out: Record<string, Record<string, number>> = {};
  for (const [name, buckets] of Object.entries(BUCKETS)) {
    expect(lines).toContain(`# TYPE ${name} histogram`);
    out[name] = {};
    for (const line of lines.filter((l) => l.startsWith(`${name}_count{`))) {
      const [, labelText = "", count = ""] = /\{(.*)\} (\S+)$/.exec(line) ?? [];
      const labels = labelsOf(labelText);
      expect(labels["gen_ai_provider_name"]).toBe("llama.cpp");
      const same = (line: string) => {
        const { le: _, ...rest } = labelsOf(line);
        return JSON.stringify(rest) === JSON.stringify(labels);
      };
      const les = lines.filter((l) => l.startsWith(`${name}_bucket{`) && same(l)).map((l) => labelsOf(l)["le"]);
      expect(les).toEqual([...buckets.map(String), "+Inf"]);
      out[name][
        [labels["gen_ai_operation_name"], labels["gen_ai_request_model"], labels["error_type"] ?? ""].join("/")
      ] = Number(count);
    }
  }
  return out;
}

describe("GenAI server metrics", () => {
  let sidecar: RunningSidecar;
  beforeAll(async () => {
    sidecar = await startTestSidecar({ sequences: 2, contextSize: 256 });
  });
  afterAll(async () => {
    await sidecar.stop();
  });

  it("follow a text completion, a chat and a refused call, each under its operation", async () => {
    const client = clientsFor(sidecar.url).grpc;
    await collect(
      client.generate({ model: "scripted", input: { case: "prompt", value: "Once upon a time" }, maxTokens: 5 }),
    );
    await collect(
      client.generate({
        model: "scripted",
        input: { case: "chat", value: { messages: [{ role: Role.USER, content: "Hi" }] } },
      }),
    );
    const tooLong = { model: "scripted", input: { case: "prompt" as const, value: "llama ".repeat(400) } };
    await expect(collect(client.generate(tooLong))).rejects.toThrow();
    expect(await counts(sidecar.url)).toEqual({
      gen_ai_server_request_duration_seconds: {
        "text_completion/scripted/": 1,
        "chat/scripted/": 1,
        "text_completion/scripted/InvalidArgument": 1,
      },
      gen_ai_server_time_to_first_token_seconds: { "text_completion/scripted/": 1, "chat/scripted/": 1 },
      gen_ai_server_time_per_output_token_seconds: { "text_completion/scripted/": 1, "chat/scripted/": 1 },
    });
  });
});
