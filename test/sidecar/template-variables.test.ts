// A sidecar serving a model with a chat template of its own (`chatTemplate`, which
// --chat-template-file sets) and requests' template variables (`chat_template_kwargs`) reaching
// it, over real gRPC: the prompt text Tokenize gives back is exactly what the template writes.
import { Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, startTestSidecar } from "../support/sidecar.js";

const TEMPLATE =
  "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.role == 'user' %}{{ greeting | default('Hi') }}, {% " +
  "endif %}" +
  "{{ m.content }}<|im_end|>\n{% endfor %}" +
  "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

let sidecar: RunningSidecar;
beforeAll(async () => {
  sidecar = await startTestSidecar({
    model: modelPath("demo"),
    chatTemplate: TEMPLATE,
    sequences: 1,
    contextSize: 512,
  });
}, 60_000);
afterAll(async () => {
  await sidecar?.stop();
});

const promptOf = async (templateVariables = ""): Promise<string> => {
  const chat = { messages: [{ role: Role.USER, content: "Hello!" }], templateVariables };
  return (await clientsFor(sidecar.url).grpc.tokenize({ input: { case: "chat", value: chat }, withText: true })).text;
};

describe("a model served with its own chat template", () => {
  it("renders with it, and with a request's variables (BOS first, as the vocabulary asks)", async () => {
    expect(await promptOf()).toBe("<s><|im_start|>user\nHi, Hello!<|im_end|>\n<|im_start|>assistant\n");
    expect(await promptOf('{"greeting": "Ahoy"}')).toBe(
      "<s><|im_start|>user\nAhoy, Hello!<|im_end|>\n<|im_start|>assistant\n",
    );
  });

  it("refuses variables that are not a JSON object, with INVALID_ARGUMENT", async () => {
    const error = await promptOf("[1]").catch((e: unknown) => e);
    expect([(error as ConnectError).code, (error as ConnectError).rawMessage]).toEqual([
      Code.InvalidArgument,
      "the chat template variables must be a JSON object",
    ]);
  });
});
