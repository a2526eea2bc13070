/**
 * Asks a JavaScript runtime for a full garbage collection through its inspector (the Chrome
 * DevTools protocol), so a memory reading taken afterwards shows what is still held rather than
 * what the collector has not yet bothered to free, and reads its JS heap. Node answers
 * `HeapProfiler.collectGarbage`; workerd ignores it, so a Worker is collected by taking a heap
 * snapshot (which collects first) and throwing the snapshot away. Works for a Node process started
 * with `--inspect=127.0.0.1:0` and for a Worker's inspector port.
 */
import WebSocket from "ws";

/** The inspector's WebSocket URL from a Node process's output ("Debugger listening on ws://…"). */
export function nodeInspectorUrl(output: string): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
}

/** The first debuggable target's WebSocket URL on an inspector port. */
export async function inspectorTarget(port: number): Promise<string> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as { webSocketDebuggerUrl?: string }[];
  const url = targets.find((t) => t.webSocketDebuggerUrl !== undefined)?.webSocketDebuggerUrl;
  if (url === undefined) throw new Error(`no inspector target on port ${port}`);
  return url;
}

/**
 * Collects garbage in the runtime behind `url` (`snapshot`: by a heap snapshot, for workerd) and
 * returns its JS heap in use afterwards, in bytes.
 */
export function collectGarbage(url: string, how: "collect" | "snapshot", timeoutMs = 30_000): Promise<number> {
  const commands =
    how === "collect"
      ? ["HeapProfiler.collectGarbage", "HeapProfiler.collectGarbage"]
      : ["HeapProfiler.takeHeapSnapshot"];
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { maxPayload: 1 << 30 });
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`inspector at ${url} did not answer`));
    }, timeoutMs);
    socket.on("open", () => {
      commands.forEach((method, i) => {
        socket.send(JSON.stringify({ id: i + 1, method }));
      });
      socket.send(JSON.stringify({ id: commands.length + 1, method: "Runtime.getHeapUsage" }));
    });
    socket.on("message", (data) => {
      const message = JSON.parse(String(data)) as {
        id?: number;
        error?: { message: string };
        result?: { usedSize?: number };
      };
      if (message.error !== undefined) reject(new Error(message.error.message));
      if (message.id === commands.length + 1) {
        clearTimeout(timer);
        socket.close();
        resolve(message.result?.usedSize ?? 0);
      }
    });
    socket.on("error", (error) => reject(new Error(`inspector at ${url} failed: ${error.message}`)));
  });
}
