// How `npm start` and the tests run the edge under `wrangler dev`: a copy of wrangler.toml in a
// private folder under .wrangler/ (the rate limit filled in, `main` made absolute), secrets in a
// `.dev.vars` beside it (mode 0600, removed by `cleanup`), never on the command line where other
// users of the machine could read them, and never in the repository. The project's own
// `.dev.vars`, if any, is merged in first.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Variables that hold secrets: passed through `.dev.vars`, not `--var`. */
export const SECRET_VARS = ["API_KEYS", "SIDECAR_TOKEN", "SIDECAR_HEADERS"] as const;

/** Access variables `npm start` hands from its environment to the edge. */
export const ACCESS_VARS = [
  "API_KEYS",
  "ALLOW_OPEN",
  "CORS_ORIGINS",
  "RATE_LIMIT",
  "SIDECAR_TOKEN",
  "SIDECAR_HEADERS",
] as const;

/** The D1 database of wrangler.toml's `[[d1_databases]]` (the store of /c1). */
export const D1_DATABASE = "llm-edge";

export interface WranglerDevSetup {
  /** Arguments for `wrangler` (`dev …`), without the ports. */
  readonly args: string[];
  /**
   * Arguments for `wrangler` that apply migrations/ to this instance's local D1 database (its
   * own state folder), to run before `dev`; applied migrations are skipped.
   */
  readonly migrateArgs: string[];
  /** Removes the private folder (the secrets with it). */
  cleanup(): void;
}

function quote(value: string): string {
  return JSON.stringify(value);
}

/**
 * Writes the private config and returns wrangler's arguments. `name` keeps instances apart, and
 * so does their local state: workerd locks its state database, so two instances at once need two
 * (`.wrangler/state/<name>`, kept between runs of the same name; `temporary` puts it in the
 * private folder, removed with it).
 */
export function prepareWranglerDev(
  name: string,
  vars: Readonly<Record<string, string>>,
  temporary = false,
): WranglerDevSetup {
  const dir = join(ROOT, ".wrangler", "run", name);
  mkdirSync(dir, { recursive: true });
  const limit =
    /^\d+$/.test(vars["RATE_LIMIT"] ?? "") && Number(vars["RATE_LIMIT"]) > 0 ? vars["RATE_LIMIT"] : undefined;
  // Paths in the copy are made absolute: the Worker's entry, its module aliases, the migrations and the page's assets.
  let config = readFileSync(join(ROOT, "wrangler.toml"), "utf8")
    .replace(/^main = "(.*)"$/m, (_m, main: string) => `main = ${quote(resolve(ROOT, main))}`)
    .replace(
      /^("[^"\n]+") = "(\.\/[^"\n]*)"$/gm,
      (_m, name: string, path: string) => `${name} = ${quote(resolve(ROOT, path))}`,
    )
    .replace(
      /^migrations_dir = "(.*)"$/m,
      (_m, migrations: string) => `migrations_dir = ${quote(resolve(ROOT, migrations))}`,
    )
    .replace(/^directory = "(.*)"$/m, (_m, directory: string) => `directory = ${quote(resolve(ROOT, directory))}`);
  if (limit !== undefined)
    config = config.replace(/simple = \{ limit = \d+, period = 60 \}/, `simple = { limit = ${limit}, period = 60 }`);
  writeFileSync(join(dir, "wrangler.toml"), config);
  const projectVars = join(ROOT, ".dev.vars");
  let secrets = existsSync(projectVars) ? `${readFileSync(projectVars, "utf8").trimEnd()}\n` : "";
  const state = temporary ? join(dir, "state") : join(ROOT, ".wrangler", "state", name);
  const args = [
    "dev",
    "--config",
    join(dir, "wrangler.toml"),
    "--persist-to",
    state,
    "--show-interactive-dev-session=false",
  ];
  for (const [key, value] of Object.entries(vars)) {
    if ((SECRET_VARS as readonly string[]).includes(key)) secrets += `${key}=${quote(value)}\n`;
    else args.push("--var", `${key}:${value}`);
  }
  const devVars = join(dir, ".dev.vars");
  writeFileSync(devVars, secrets, { mode: 0o600 });
  chmodSync(devVars, 0o600);
  const migrateArgs = [
    "d1",
    "migrations",
    "apply",
    D1_DATABASE,
    "--local",
    "--config",
    join(dir, "wrangler.toml"),
    "--persist-to",
    state,
  ];
  return { args, migrateArgs, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** wrangler dev's inspector port for an edge port (8080 → 9229): one per instance, never shared. */
export function inspectorPortFor(edgePort: number): number {
  const derived = edgePort + 1149;
  return derived <= 65535 ? derived : edgePort - 1149;
}
