// The GenAI server metrics of the OpenTelemetry semantic conventions (gen_ai.server.*), as
// Prometheus histograms beside the sidecar's own (docs/decisions.md, "Traces"): the names with
// dots as underscores and the unit appended, the conventions' recommended buckets and attributes.
import { Histogram, type Registry } from "prom-client";

const LABELS = ["gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "error_type"] as const;
type Labels = Partial<Record<(typeof LABELS)[number], string>>;

/** What one generation was, for the metrics' labels. */
export interface GenerationLabels {
  readonly operation: string;
  readonly model: string;
}

export class GenAiServerMetrics {
  readonly #duration: Histogram<(typeof LABELS)[number]>;
  readonly #firstToken: Histogram<(typeof LABELS)[number]>;
  readonly #perToken: Histogram<(typeof LABELS)[number]>;

  constructor(registry: Registry) {
    const histogram = (name: string, help: string, buckets: number[]) =>
      new Histogram({ name, help, buckets, labelNames: LABELS, registers: [registry] });
    this.#duration = histogram(
      "gen_ai_server_request_duration_seconds",
      "GenAI server request duration (gen_ai.server.request.duration): from the call's arrival to its last event.",
      [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
    );
    this.#firstToken = histogram(
      "gen_ai_server_time_to_first_token_seconds",
      "Time to generate the first token (gen_ai.server.time_to_first_token): from the call's arrival, for successful " +
        "generations.",
      [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
    );
    this.#perToken = histogram(
      "gen_ai_server_time_per_output_token_seconds",
      "Time per output token after the first (gen_ai.server.time_per_output_token), for successful generations.",
      [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5],
    );
  }

  /** One generation that ended: its durations in seconds; `errorType` when it failed. */
  record(
    of: GenerationLabels,
    seconds: { total: number; firstToken?: number | undefined; perToken?: number | undefined },
    errorType?: string,
  ): void {
    const labels: Labels = {
      gen_ai_operation_name: of.operation,
      gen_ai_provider_name: "llama.cpp",
      gen_ai_request_model: of.model,
    };
    if (errorType !== undefined) labels.error_type = errorType;
    this.#duration.observe(labels, seconds.total);
    if (errorType !== undefined) return;
    if (seconds.firstToken !== undefined) this.#firstToken.observe(labels, seconds.firstToken);
    if (seconds.perToken !== undefined) this.#perToken.observe(labels, seconds.perToken);
  }
}
