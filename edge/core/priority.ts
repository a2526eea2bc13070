// How urgently a request is served (proto: GenerateRequest.priority, EmbedRequest.priority): a batch
// line's request is marked PRIORITY_BATCH by the batch runner (state/batches/) and every sidecar call
// made for it carries that (serve.ts, the embeddings handler); any other request is interactive.
import { Priority } from "../../proto/gen/inference/v1/inference_pb.js";

const priorities = new WeakMap<Request, Priority>();

export function setPriority(request: Request, priority: Priority): void {
  priorities.set(request, priority);
}

/** The request's priority; PRIORITY_INTERACTIVE unless it was marked. */
export function priorityOf(request: Request): Priority {
  return priorities.get(request) ?? Priority.INTERACTIVE;
}
