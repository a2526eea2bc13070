// The KV-cache events' settings (`--kv-events`, `--kv-events-pod`, `--kv-events-block-size`), apart from the
// publisher so reading the flags loads no ZeroMQ.

/**
 * Tokens per block unless `--kv-events-block-size` says otherwise: vLLM's default block size, and llm-d's token
 * processor's default, so neither side needs configuring. docs/decisions.md, "KV-cache events".
 */
export const DEFAULT_KV_BLOCK_SIZE = 16;

export interface KvEventsSettings {
  /** `tcp://*:5557` (a wildcard host, `ipc://` or `inproc://`: bound), or `tcp://host:port` (connected to). */
  readonly endpoint: string;
  /** The pod in the topic (`--kv-events-pod`). */
  readonly pod: string;
  /** Tokens per block (`--kv-events-block-size`). */
  readonly blockSize: number;
  /** The replay socket's address (`--kv-events-replay`); none: no replay. */
  readonly replay?: string | undefined;
}
