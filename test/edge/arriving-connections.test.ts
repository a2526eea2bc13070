// The Node edge counts a connection that opened and sent no request yet among the requests on their
// way (edge/core/arriving.ts, `opened`): a client sending several requests at once opens one for
// each its pool lacks, and the sidecar's first batch waits for what they carry.
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeEdge, type RunningEdge } from "../../edge/hosts/node/main.js";
import { FakeSidecar } from "../support/fake-sidecar.js";
import { openSocket } from "../support/raw-socket.js";

function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    socket.once("close", () => resolve());
    socket.destroy();
  });
}

describe("Node edge: connections on their way", () => {
  const sidecar = new FakeSidecar();
  let edge: RunningEdge;
  const complete = async (): Promise<number | undefined> => {
    const answer = await fetch(`${edge.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", prompt: "hi" }),
    });
    expect(answer.status).toBe(200);
    await answer.text();
    return sidecar.lastCall?.request.arrivingWith;
  };
  beforeAll(async () => {
    edge = await startNodeEdge({ sidecar, port: 0, publicDir: false });
  });
  afterAll(async () => {
    await edge.close();
  });

  it(
    "a connection opened and silent counts as one request behind; the request's own connection never " + "does",
    async () => {
      // The window is 25 ms: on a loaded machine one try may miss it, so a few tries; none may count more.
      const seen: (number | undefined)[] = [];
      for (let attempt = 0; attempt < 5 && !seen.includes(1); attempt++) {
        const silent = await openSocket(edge.url);
        seen.push(await complete());
        await closed(silent);
      }
      expect(seen).toContain(1);
      expect(seen.every((n) => n === 0 || n === 1)).toBe(true);
    },
  );

  it("a connection that closed, or that sent its request, no longer counts", async () => {
    const silent = await openSocket(edge.url);
    await closed(silent);
    expect(await complete()).toBe(0);
    // The keep-alive connection of the requests above has sent its requests: it never counts again.
    expect(await complete()).toBe(0);
  });
});
