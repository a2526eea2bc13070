// Message roles every protocol shares, and how each maps to the proto's chat role.
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";

/** The message roles any protocol may send; each protocol's schema admits its own subset. */
export type MessageRole = "system" | "developer" | "user" | "assistant";

/** A protocol role as the sidecar's chat role (`developer` is a system message). */
export function toProtoRole(role: MessageRole): Role {
  switch (role) {
    case "system":
    case "developer":
      return Role.SYSTEM;
    case "user":
      return Role.USER;
    case "assistant":
      return Role.ASSISTANT;
    default: {
      const unknownRole: never = role;
      throw new Error(`unknown role ${String(unknownRole)}`);
    }
  }
}
