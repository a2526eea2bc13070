// The media layer (edge/core/media/): an image reference → bytes. data: URLs and base64 decoded and checked, the
// size limit, private and loopback hosts refused by their literal, an allowed host fetched from a local HTTP
// server, a redirect to a private host refused, the timeout; and every protocol's image shape reaching the sidecar
// as ChatMessage.parts in order, with failures as 400s naming the protocol's own path.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blockedHost } from "../../edge/core/media/host-guard.js";
import { fetchImage, MediaRefusal } from "../../edge/core/media/fetch-image.js";
import { imageBytes } from "../../edge/core/media/image-bytes.js";
import { defaultMediaSettings, type MediaSettings } from "../../edge/core/media/settings.js";
import { create } from "@bufbuild/protobuf";
import { type Chat, ModelDescriptionSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { post, sentChat, testApp } from "../support/app.js";
import { catalogued, finish, start, token } from "../support/fake-sidecar.js";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);
const PNG_BASE64 = btoa(String.fromCharCode(...PNG));
const DATA_URL = `data:image/png;base64,${PNG_BASE64}`;

const settings = (more: Partial<MediaSettings> = {}): MediaSettings => ({ ...defaultMediaSettings(), ...more });

async function refusal(promise: Promise<unknown>): Promise<[string, string]> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof MediaRefusal) return [error.code, error.message];
    throw error;
  }
  throw new Error("not refused");
}

describe("data: URLs and base64", () => {
  it("decodes a data: URL and base64 text (line breaks ignored), keeping the mime type", async () => {
    expect(await imageBytes({ kind: "url", url: DATA_URL }, settings(), "o")).toEqual({
      bytes: PNG,
      mimeType: "image/png",
    });
    const wrapped = `${PNG_BASE64.slice(0, 8)}\n${PNG_BASE64.slice(8)}`;
    expect(await imageBytes({ kind: "base64", data: wrapped, mimeType: "" }, settings(), "o")).toEqual({
      bytes: PNG,
      mimeType: "",
    });
  });

  it("refuses bad base64, a data: URL that is not base64 or not an image, and an oversize image", async () => {
    expect(await refusal(imageBytes({ kind: "url", url: "data:image/png;base64,@@@" }, settings(), "o"))).toEqual([
      "invalid_image_data",
      "is not valid base64 image data",
    ]);
    expect(await refusal(imageBytes({ kind: "url", url: "data:image/png,abc" }, settings(), "o"))).toEqual([
      "invalid_image_url",
      "is a data: URL without ';base64': send the image base64-encoded",
    ]);
    expect(await refusal(imageBytes({ kind: "url", url: "data:text/plain;base64,aGk=" }, settings(), "o"))).toEqual([
      "invalid_image_url",
      "is a data: URL of 'text/plain': only images are read",
    ]);
    expect(await refusal(imageBytes({ kind: "url", url: DATA_URL }, settings({ maxBytes: 11 }), "o"))).toEqual([
      "image_too_large",
      "the image is over 11 bytes (MEDIA_MAX_BYTES)",
    ]);
    expect(await imageBytes({ kind: "url", url: DATA_URL }, settings({ maxBytes: 12 }), "o")).toHaveProperty(
      "bytes",
      PNG,
    );
  });
});

describe("files", () => {
  const files: MediaSettings["files"] = async (owner, id) =>
    owner !== "me"
      ? undefined
      : id === "file-img"
        ? { purpose: "vision", bytes: PNG }
        : id === "file-batch"
          ? { purpose: "batch", bytes: PNG }
          : undefined;

  it("reads the caller's file of an image purpose; another's, an unknown one or a batch file is refused", async () => {
    const withFiles = settings({ files });
    expect(await imageBytes({ kind: "file", fileId: "file-img" }, withFiles, "me")).toEqual({
      bytes: PNG,
      mimeType: "",
    });
    expect(await refusal(imageBytes({ kind: "file", fileId: "file-img" }, withFiles, "other"))).toEqual([
      "file_not_found",
      "no such file: file-img",
    ]);
    expect(await refusal(imageBytes({ kind: "file", fileId: "file-batch" }, withFiles, "me"))).toEqual([
      "invalid_image_file",
      "file file-batch has purpose 'batch': an image is uploaded with purpose 'vision' or 'user_data'",
    ]);
    expect((await refusal(imageBytes({ kind: "file", fileId: "file-img" }, settings(), "me")))[0]).toBe(
      "file_not_found",
    );
  });
});

describe("host literals", () => {
  it.each([
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "[::1]",
    "[::]",
    "[fe80::1]",
    "[fd00::1]",
    "[::ffff:127.0.0.1]",
    "localhost",
    "foo.localhost",
    "metadata.google.internal",
  ])("%s is refused", (host) => {
    expect(blockedHost(new URL(`http://${host}/x.png`).hostname)).toBeDefined();
  });

  it.each(["example.com", "8.8.8.8", "[2606:4700::1111]", "172.32.0.1"])("%s is fetched", (host) => {
    expect(blockedHost(new URL(`http://${host}/x.png`).hostname)).toBeUndefined();
  });

  it("sees through the URL parser's other spellings of 127.0.0.1", () => {
    for (const spelled of ["http://2130706433/", "http://0x7f.1/", "http://127.1/"])
      expect(blockedHost(new URL(spelled).hostname)).toBeDefined();
  });
});

describe("fetching by URL", () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === "/red.png") {
        response.writeHead(200, { "content-type": "image/png" });
        response.end(PNG);
      } else if (request.url === "/to-private") {
        response.writeHead(302, { location: "http://10.0.0.1/x.png" });
        response.end();
      } else if (request.url === "/to-red") {
        response.writeHead(301, { location: "/red.png" });
        response.end();
      } else if (request.url === "/slow") {
        setTimeout(() => response.end(PNG), 2000).unref();
      } else if (request.url === "/big") {
        response.writeHead(200, { "content-type": "image/png" });
        response.write(new Uint8Array(64));
        response.end(new Uint8Array(64));
      } else {
        response.writeHead(404);
        response.end();
      }
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  const allowed = (more: Partial<MediaSettings> = {}) => settings({ allowHosts: ["127.0.0.1"], ...more });

  it("refuses a loopback host unless MEDIA_ALLOW_HOSTS names it, then fetches it", async () => {
    const [code, message] = await refusal(fetchImage(`${base}/red.png`, settings()));
    expect([code, message]).toEqual([
      "image_host_refused",
      "the image's host is a private, loopback or link-local address, which this server does not fetch from " +
        "(MEDIA_ALLOW_HOSTS lists hosts it may)",
    ]);
    expect(await fetchImage(`${base}/red.png`, allowed())).toEqual({ bytes: PNG, mimeType: "image/png" });
  });

  it("follows a redirect with the same checks: to an allowed path fetched, to a private host refused", async () => {
    expect(await fetchImage(`${base}/to-red`, allowed())).toEqual({ bytes: PNG, mimeType: "image/png" });
    expect((await refusal(fetchImage(`${base}/to-private`, allowed())))[0]).toBe("image_host_refused");
  });

  it("stops at the size limit while reading, at the timeout, on an error status, when off", async () => {
    expect(await refusal(fetchImage(`${base}/big`, allowed({ maxBytes: 100 })))).toEqual([
      "image_too_large",
      "the image is over 100 bytes (MEDIA_MAX_BYTES)",
    ]);
    expect(await refusal(fetchImage(`${base}/slow`, allowed({ fetchTimeoutMs: 200 })))).toEqual([
      "image_fetch_timeout",
      "fetching the image took over 200 ms (MEDIA_FETCH_TIMEOUT_MS)",
    ]);
    expect(await refusal(fetchImage(`${base}/missing.png`, allowed()))).toEqual([
      "image_fetch_failed",
      "fetching the image answered HTTP 404",
    ]);
    expect((await refusal(fetchImage(`${base}/red.png`, allowed({ fetch: false }))))[0]).toBe("image_fetch_off");
    expect((await refusal(fetchImage("ftp://example.com/x.png", allowed())))[0]).toBe("invalid_image_url");
  });
});

/** A message's parts as [kind, text or bytes' length]. */
const partsOf = (chat: Chat, i: number) =>
  chat.messages[i]?.parts.map((p) => (p.part.case === "text" ? p.part.value : p.part.value?.data.length));

describe("every protocol's images reach the sidecar as parts, in order", () => {
  const script = [start(), token("ok"), finish()];

  it("OpenAI chat: image_url parts; adjacent texts joined; a message without images keeps its content", async () => {
    const { app, sidecar } = testApp(script);
    const response = await post(app, "/v1/chat/completions", {
      messages: [
        { role: "system", content: "be brief" },
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
            { type: "image_url", image_url: { url: DATA_URL, detail: "high" } },
            { type: "text", text: "c" },
          ],
        },
      ],
    });
    expect(response.status).toBe(200);
    const chat = sentChat(sidecar);
    expect(chat.messages[0]?.content).toBe("be brief");
    expect(chat.messages[1]?.content).toBe("");
    expect(partsOf(chat, 1)).toEqual(["a\nb", PNG.length, "c"]);
    expect(chat.messages[1]?.parts[1]?.part.value).toMatchObject({ mimeType: "image/png" });
  });

  it("OpenAI chat: a bad image, a private URL and input_audio are 400s naming the part; nothing is sent", async () => {
    const { app, sidecar } = testApp(script);
    const send = (part: unknown) =>
      post(app, "/v1/chat/completions", { messages: [{ role: "user", content: [{ type: "text", text: "x" }, part] }] });
    const bad = await send({ type: "image_url", image_url: { url: "data:image/png;base64,%%" } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: {
        message: "Invalid 'messages[0].content[1].image_url.url': is not valid base64 image data.",
        type: "invalid_request_error",
        param: "messages[0].content[1].image_url.url",
        code: "invalid_image_data",
      },
    });
    const local = await send({ type: "image_url", image_url: { url: "http://169.254.169.254/latest" } });
    expect(local.status).toBe(400);
    expect(((await local.json()) as { error: { code: string } }).error.code).toBe("image_host_refused");
    const audio = await send({ type: "input_audio", input_audio: { data: "aGk=", format: "wav" } });
    expect(audio.status).toBe(400);
    expect(((await audio.json()) as { error: { message: string } }).error.message).toBe(
      "Invalid 'messages[0].content[1].type': content parts of type 'input_audio' are not supported (no audio " +
        "model is served here); supported: 'text', 'image_url'",
    );
    expect(sidecar.calls).toHaveLength(0);
  });

  it("Anthropic: image blocks (base64 and in a tool_result) in order; an error in Anthropic's shape", async () => {
    const { app, sidecar } = testApp(script);
    const image = { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } };
    const response = await post(app, "/v1/messages", {
      model: "m",
      max_tokens: 8,
      messages: [
        { role: "user", content: "look" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "shot", input: {} }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "here" }, image] },
            image,
            { type: "text", text: "what?" },
          ],
        },
      ],
    });
    expect(response.status).toBe(200);
    const chat = sentChat(sidecar);
    expect(partsOf(chat, 2)).toEqual(["here", PNG.length]);
    expect(partsOf(chat, 3)).toEqual([PNG.length, "what?"]);
    const bad = await post(app, "/v1/messages", {
      model: "m",
      max_tokens: 8,
      messages: [
        { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "!" } }] },
      ],
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "Invalid 'messages[0].content[0].source.data': is not valid base64 image data.",
      },
    });
  });

  it("Responses: input_image by image_url; Ollama: a message's images before its text", async () => {
    const { app, sidecar } = testApp(script);
    const responses = await post(app, "/v1/responses", {
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "q" },
            { type: "input_image", image_url: DATA_URL },
          ],
        },
      ],
    });
    expect(responses.status).toBe(200);
    expect(partsOf(sentChat(sidecar), 0)).toEqual(["q", PNG.length]);
    const ollama = await post(app, "/api/chat", {
      model: "m",
      stream: false,
      messages: [{ role: "user", content: "q", images: [PNG_BASE64] }],
    });
    expect(ollama.status).toBe(200);
    expect(partsOf(sentChat(sidecar), 0)).toEqual([PNG.length, "q"]);
    const bad = await post(app, "/api/chat", {
      model: "m",
      stream: false,
      messages: [{ role: "user", content: "q", images: ["###"] }],
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "Invalid 'messages[0].images[0]': is not valid base64 image data." });
  });
});

describe("which models read images", () => {
  it("/v1/models, /v1/info and /api/show say so from ModelInfo.modalities", async () => {
    const { app, sidecar } = testApp();
    sidecar.models = [
      catalogued("eyes", { toolCallSyntax: "hermes", modalities: ["image"] }),
      catalogued("words", { toolCallSyntax: "hermes" }),
    ];
    sidecar.describeModel = async () => create(ModelDescriptionSchema, {});
    const models = (await (await app.fetch(new Request("http://edge.test/v1/models"))).json()) as {
      data: { id: string; capabilities: string[]; modalities: string[] }[];
    };
    expect(models.data.map((m) => [m.id, m.capabilities, m.modalities])).toEqual([
      ["eyes", ["completion", "tools", "vision"], ["text", "image"]],
      ["words", ["completion", "tools"], ["text"]],
    ]);
    const info = (await (await app.fetch(new Request("http://edge.test/v1/info"))).json()) as {
      models: { id: string; modalities: string[] }[];
    };
    expect(info.models.map((m) => [m.id, m.modalities])).toEqual([
      ["eyes", ["text", "image"]],
      ["words", ["text"]],
    ]);
    for (const [model, capabilities] of [
      ["eyes", ["completion", "tools", "vision"]],
      ["words", ["completion", "tools"]],
    ] as const) {
      const shown = (await (await post(app, "/api/show", { model })).json()) as { capabilities: string[] };
      expect(shown.capabilities).toEqual(capabilities);
    }
  });
});
