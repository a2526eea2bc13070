// The KV-cache events' replay (`--kv-events-replay`), as vLLM's publisher answers it: a ROUTER socket; a subscriber
// sends an empty frame and a sequence number (8 bytes big-endian), and gets every batch kept from that number on
// (empty frame, topic, number, payload), then an end (empty frame, empty topic, -1 as 8 bytes, empty payload).
import { Router } from "zeromq";

/** A batch's frames: topic, sequence number (8 bytes big-endian), payload. */
export type Frames = [Buffer, Buffer, Uint8Array];

/** Batches kept for replay (vLLM keeps 10,000 steps). */
export const REPLAY_BATCHES = 10_000;

const END = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

/** The last REPLAY_BATCHES batches, oldest first. */
export class ReplayBuffer {
  readonly #batches: Frames[] = [];
  add(frames: Frames): void {
    this.#batches.push(frames);
    if (this.#batches.length > REPLAY_BATCHES) this.#batches.shift();
  }
  from(seq: bigint): Frames[] {
    return this.#batches.filter((frames) => frames[1].readBigUInt64BE(0) >= seq);
  }
}

/** Answers replay requests on `endpoint` (bound, as vLLM binds it) until closed. */
export async function serveReplay(
  endpoint: string,
  buffer: ReplayBuffer,
): Promise<{ readonly endpoint: string; close(): Promise<void> }> {
  const router = new Router({ linger: 0 });
  await bindRetrying(router, endpoint);
  const address = router.lastEndpoint ?? endpoint;
  const serving = (async () => {
    for await (const [client, ...rest] of router) {
      const start = rest[rest.length - 1];
      if (client === undefined || start === undefined || start.length !== 8) continue;
      for (const [topic, seq, payload] of buffer.from(start.readBigUInt64BE(0)))
        await router.send([client, Buffer.alloc(0), topic, seq, payload]);
      await router.send([client, Buffer.alloc(0), Buffer.alloc(0), END, Buffer.alloc(0)]);
    }
  })().catch(() => undefined);
  return {
    endpoint: address,
    async close() {
      router.close();
      await serving;
    },
  };
}

/** Binds, trying again for up to a second while the address is in use (a socket closed just before may hold it). */
async function bindRetrying(router: Router, endpoint: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await router.bind(endpoint);
    } catch (error) {
      if (attempt >= 20 || (error as { code?: string }).code !== "EADDRINUSE") throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
