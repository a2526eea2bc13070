// Test-only: serves any `Sidecar` implementation (e.g. FakeSidecar) as binary
// gRPC-Web over HTTP/1.1, so the edge's real client (createSidecarClient) can be
// tested end to end, in vitest or behind `wrangler dev`. A client that goes away
// aborts the signal handed to the implementation. Not the project's sidecar server.
import { create, fromBinary, toBinary, type DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  GenerateRequestSchema,
  GenerateResponseSchema,
  ListModelsRequestSchema,
  ListModelsResponseSchema,
} from "../../proto/gen/inference/v1/inference_pb.js";
import type { Sidecar } from "../../edge/upstream/connection.js";

function frame(flag: number, payload: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + payload.length);
  out[0] = flag;
  out.writeUInt32BE(payload.length, 1);
  out.set(payload, 5);
  return out;
}

function trailer(error: ConnectError | undefined): Buffer {
  const code = error?.code ?? 0;
  let text = `grpc-status: ${code}\r\n`;
  if (error !== undefined) text += `grpc-message: ${encodeURIComponent(error.rawMessage)}\r\n`;
  return frame(0x80, new TextEncoder().encode(text));
}

async function readMessage<D extends DescMessage>(req: IncomingMessage, schema: D) {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return fromBinary(schema, body.subarray(5, 5 + body.readUInt32BE(1)));
}

export interface GrpcWebTestServer {
  readonly url: string;
  /** Requests seen, by path. */
  readonly paths: string[];
  close(): Promise<void>;
}

export async function serveGrpcWeb(sidecar: Sidecar, port = 0): Promise<GrpcWebTestServer> {
  const paths: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    paths.push(req.url ?? "");
    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort(new ConnectError("client went away", Code.Canceled));
    });
    const write = (chunk: Buffer) => {
      if (!res.headersSent) res.writeHead(200, { "content-type": "application/grpc-web+proto" });
      res.write(chunk);
    };
    const run = async () => {
      try {
        switch (req.url) {
          case "/inference.v1.InferenceService/Generate": {
            const request = await readMessage(req, GenerateRequestSchema);
            for await (const event of sidecar.generate(request, { signal: abort.signal })) {
              write(frame(0, toBinary(GenerateResponseSchema, event)));
            }
            break;
          }
          case "/inference.v1.InferenceService/ListModels": {
            const request = await readMessage(req, ListModelsRequestSchema);
            const response = await sidecar.listModels(request, { signal: abort.signal });
            write(frame(0, toBinary(ListModelsResponseSchema, create(ListModelsResponseSchema, response))));
            break;
          }
          default:
            throw new ConnectError(`no method ${req.url ?? ""}`, Code.Unimplemented);
        }
        write(trailer(undefined));
      } catch (error) {
        if (!abort.signal.aborted) write(trailer(ConnectError.from(error)));
      }
      res.end();
    };
    void run();
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
