/** Counters the sidecar exposes (plain text at GET /metrics) so operators and tests can see what generation did. */
export class EngineMetrics {
  requestsStarted = 0;
  requestsRejected = 0;
  requestsCancelledInQueue = 0;
  generationsActive = 0;
  generationsAborted = 0;
  tokensGenerated = 0;

  render(extra: Readonly<Record<string, number>> = {}): string {
    const lines = [
      `sidecar_requests_started_total ${this.requestsStarted}`,
      `sidecar_requests_rejected_total ${this.requestsRejected}`,
      `sidecar_requests_cancelled_in_queue_total ${this.requestsCancelledInQueue}`,
      `sidecar_generations_active ${this.generationsActive}`,
      `sidecar_generations_aborted_total ${this.generationsAborted}`,
      `sidecar_tokens_generated_total ${this.tokensGenerated}`,
    ];
    for (const [name, value] of Object.entries(extra)) lines.push(`${name} ${value}`);
    return `${lines.join("\n")}\n`;
  }
}
