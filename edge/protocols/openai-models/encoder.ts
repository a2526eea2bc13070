// Sidecar ModelInfo → OpenAI model objects, with the catalogue's fields OpenAI's objects lack:
// where the model is (`status`), its context length, memory, aliases, kind, when an idle one is
// unloaded and what a loaded one can do (docs/contract.md, "Models").
import type { ModelInfo } from "../../../proto/gen/inference/v1/inference_pb.js";
import { statusName, type ModelStatusName } from "../../upstream/catalogue.js";

export interface ModelStatusObject {
  value: ModelStatusName;
  /** While loading: how much of the file is loaded, 0..1 (to three decimals). */
  progress?: number;
  /** When failed: why its last load failed. */
  reason?: string;
}

export interface OpenAiModel {
  id: string;
  object: "model";
  /** When the model was loaded (Unix seconds); 0 for one never loaded. */
  created: number;
  owned_by: string;
  status: ModelStatusObject;
  /** Tokens one request may use (prompt plus reply); null for a model not loaded whose load decides it. */
  context_length: number | null;
  /** When loaded: the host and GPU memory it takes, in bytes (when the sidecar reports it). */
  memory_bytes?: number;
  /** Other names that reach it. */
  aliases: string[];
  /** "generate", "embed", "rank", or "lora" for a LoRA adapter (a model of its own name on its parent's weights). */
  kind: string;
  /** A LoRA adapter's base model. */
  parent?: string;
  /** When loaded and idle: the Unix time (seconds) it will be unloaded at. */
  expires_at?: number;
  /**
   * When loaded: what it does, in Ollama's words (`completion`, `tools`, `insert`: fill-in-the-middle, `thinking`,
   * `vision`: reads images, `embedding`, `rank`).
   */
  capabilities?: string[];
  /** When loaded and it fills in the middle: its FIM order (`prefix-suffix-middle` or `suffix-prefix-middle`). */
  fill_in_middle?: string;
  /** When loaded and it can call tools: its template's tool-call syntax (`hermes`, `qwen3-coder`, `harmony`, …). */
  tool_call_syntax?: string;
  /** When loaded and it cannot call tools: why (its template writes none, or none this server reads). */
  tools_refused?: string;
  /** When loaded: what it reads, `text` and, with a projector, `image` (ModelInfo.modalities). */
  modalities?: string[];
}

/** A loaded model's capabilities and tool-call syntax, as its sidecar learned them from its template. */
function capabilities(
  model: ModelInfo,
  kind: string,
): Pick<OpenAiModel, "capabilities" | "fill_in_middle" | "tool_call_syntax" | "tools_refused" | "modalities"> {
  // A sidecar older than reply syntaxes reports neither: nothing is claimed.
  if (model.toolCallSyntax === "" && model.toolsRefused === "") return {};
  if (kind === "embed") return { capabilities: ["embedding"] };
  if (kind === "rank") return { capabilities: ["rank"] };
  const list = [
    "completion",
    ...(model.toolCallSyntax === "" ? [] : ["tools"]),
    ...(model.fillInMiddle === "" ? [] : ["insert"]),
    ...(model.reasoning ? ["thinking"] : []),
    ...(model.modalities.includes("image") ? ["vision"] : []),
  ];
  return {
    capabilities: list,
    modalities: ["text", ...model.modalities],
    ...(model.fillInMiddle === "" ? {} : { fill_in_middle: model.fillInMiddle }),
    ...(model.toolCallSyntax === "" ? {} : { tool_call_syntax: model.toolCallSyntax }),
    ...(model.toolsRefused === "" ? {} : { tools_refused: model.toolsRefused }),
  };
}

function statusObject(model: ModelInfo): ModelStatusObject {
  const value = statusName(model);
  if (value === "loading") return { value, progress: Math.round(model.loadProgress * 1000) / 1000 };
  if (value === "failed") return { value, reason: model.failure };
  return { value };
}

export function openAiModel(model: ModelInfo): OpenAiModel {
  const status = statusObject(model);
  // A sidecar older than catalogues reports no kind: its models generate.
  const kind = model.kind === "" ? "generate" : model.kind;
  return {
    id: model.id,
    object: "model",
    created: Number(model.created),
    owned_by: "local",
    status,
    context_length: model.contextSize === 0 ? null : model.contextSize,
    ...(status.value === "loaded" && model.memoryBytes > 0n ? { memory_bytes: Number(model.memoryBytes) } : {}),
    aliases: [...model.aliases],
    kind,
    ...(model.parent === "" ? {} : { parent: model.parent }),
    ...(model.expiresAt > 0n ? { expires_at: Number(model.expiresAt) } : {}),
    ...(status.value === "loaded" ? capabilities(model, kind) : {}),
  };
}

export function openAiModelList(models: readonly ModelInfo[]): { object: "list"; data: OpenAiModel[] } {
  return { object: "list", data: models.map(openAiModel) };
}
