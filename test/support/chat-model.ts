// A scripted chat model loaded straight into node-llama-cpp (no sidecar), for the tests that check
// what the model itself answers: its context and the chat wrapper node-llama-cpp resolves for it.
import {
  getLlama,
  resolveChatWrapper,
  type ChatWrapper,
  type Llama,
  type LlamaContext,
  type LlamaModel,
} from "node-llama-cpp";

export interface ChatModel {
  readonly llama: Llama;
  readonly model: LlamaModel;
  readonly context: LlamaContext;
  readonly wrapper: ChatWrapper;
  dispose(): Promise<void>;
}

export async function loadChatModel(
  modelPath: string,
  options: { threads: number; sequences: number; contextSize: number },
): Promise<ChatModel> {
  const llama = await getLlama({ gpu: false, build: "never", maxThreads: options.threads });
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({ sequences: options.sequences, contextSize: options.contextSize });
  return {
    llama,
    model,
    context,
    wrapper: resolveChatWrapper(model),
    async dispose() {
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    },
  };
}
