// The one workerd module the edge imports: `env` from "cloudflare:workers", the Worker's vars,
// secrets and bindings at module scope (edge/hosts/worker/main.ts checks its settings there, before serving).
declare module "cloudflare:workers" {
  export const env: Readonly<Record<string, unknown>>;
}
