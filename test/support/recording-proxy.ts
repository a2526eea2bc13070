// A pass-through HTTP proxy that keeps every request body it forwards, for recording what real
// clients send. Bodies are redacted before they are saved (see `redact`): structure, field names,
// roles, block types, numbers and booleans stay; long texts (a client's own prompts and tool
// descriptions) become a placeholder with their length.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  /** The status the target answered with (0: no answer). */
  status: number;
}

export interface RecordingProxy {
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Long strings → "<N chars>"; keys and short strings (names, roles, types, ids) stay. */
export function redact(value: unknown): unknown {
  if (typeof value === "string") return value.length > 64 ? `<${value.length} chars>` : value;
  if (Array.isArray(value)) return value.map(redact);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v)]));
  return value;
}

const KEPT_HEADERS = ["content-type", "anthropic-version", "anthropic-beta", "openai-beta", "accept"];

export function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const raw = Buffer.concat(chunks);
      const headers = Object.fromEntries(
        KEPT_HEADERS.flatMap((name) =>
          typeof req.headers[name] === "string" ? [[name, req.headers[name] as string]] : [],
        ),
      );
      let body: unknown = null;
      try {
        body = raw.length > 0 ? JSON.parse(raw.toString("utf8")) : null;
      } catch {
        body = `<${raw.length} bytes, not JSON>`;
      }
      const recorded: RecordedRequest = { method: req.method ?? "GET", path: req.url ?? "/", headers, body, status: 0 };
      requests.push(recorded);
      const forwarded = { ...req.headers } as Record<string, string>;
      delete forwarded["host"];
      delete forwarded["content-length"];
      const init: RequestInit = { method: req.method ?? "GET", headers: forwarded };
      if (raw.length > 0) init.body = raw;
      try {
        const response = await fetch(`${target}${req.url ?? "/"}`, init);
        recorded.status = response.status;
        res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
        if (response.body === null) return res.end();
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
        res.end();
      } catch {
        // The client went away (or the server did): so does the forwarded exchange.
        res.destroy();
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
