/**
 * `npm run docs:endpoints`: writes the list of endpoints between `<!-- endpoints:begin -->` and
 * `<!-- endpoints:end -->` in each document that lists them, from the route table
 * (edge/http/routes.ts): each route's method, path, `about` and contract section, and when it is
 * served, found by building the table without a store, with one, and with batches as the app does.
 * test/endpoint-docs.test.ts fails when a document differs from what this writes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import type { AppContext } from "../edge/core/context.js";
import { routeTable, type Route } from "../edge/http/routes.js";
import type { Batches } from "../edge/state/batches/batches.js";
import type { Stores } from "../edge/state/stores.js";
import { ROOT } from "./wrangler-dev.js";

export const CONTRACT_MD = join(ROOT, "docs", "contract.md");
/** The documents that hold the list. */
export const ENDPOINT_DOCS: readonly string[] = [CONTRACT_MD, join(ROOT, "edge", "README.md")];

export const BEGIN = "<!-- endpoints:begin -->";
export const END = "<!-- endpoints:end -->";

/** When a route is served: the state's routes need a store, the batch routes the host's file store too. */
export type Served = "always" | "with a store" | "with a store and the host's file store";

/** One line of the list: a route, or one of its forms. */
export interface ListedEndpoint {
  readonly endpoint: string;
  readonly about: string;
  readonly contract: string | undefined;
  readonly served: Served;
}

/** The tables the app builds: without a store, with one, with one and batches (handlers are not called). */
export function tables(): {
  readonly bare: readonly Route[];
  readonly stored: readonly Route[];
  readonly all: readonly Route[];
} {
  const context = {} as AppContext;
  const store = {} as Stores;
  return {
    bare: routeTable(context, "open"),
    stored: routeTable(context, "open", store),
    all: routeTable(context, "open", store, {} as Batches),
  };
}

export const routeKey = (route: Route): string => `${route.method} ${route.path}`;

/** A router path as the docs write it: `:id` and `:id+` as `{id}`. */
export const shownPath = (path: string): string => path.replace(/:([a-z_]+)\+?/g, "{$1}");

/** A route's text (false only in the Worker's bundle, which this never reads). */
const text = (about: string | false): string => about || "";

/** Every route of the fullest table, each of its forms after it, with when it is served. */
export function listedEndpoints(): ListedEndpoint[] {
  const { bare, stored, all } = tables();
  const bareKeys = new Set(bare.map(routeKey));
  const storedKeys = new Set(stored.map(routeKey));
  return all.flatMap((route) => {
    const key = routeKey(route);
    const served: Served = bareKeys.has(key)
      ? "always"
      : storedKeys.has(key)
        ? "with a store"
        : "with a store and the host's file store";
    const endpoint = `${route.method} ${shownPath(route.path)}`;
    const forms = (route.forms ?? []).map((f) => ({
      endpoint: `${endpoint}${f.form}`,
      about: text(f.about),
      contract: f.contract ?? route.contract,
      served,
    }));
    return [{ endpoint, about: text(route.about), contract: route.contract, served }, ...forms];
  });
}

/** The list as the document at `file` shows it: contract links relative to it. */
export function endpointTable(file: string): string {
  const target = relative(dirname(file), CONTRACT_MD);
  const link = (anchor: string | undefined): string =>
    anchor === undefined ? "" : ` ([contract](${file === CONTRACT_MD ? "" : target}#${anchor}))`;
  const rows = listedEndpoints().map(
    (e) => `| \`${e.endpoint}\` | ${e.about.replace(/\|/g, "\\|")}${link(e.contract)} | ${e.served} |`,
  );
  const note =
    "<!-- Written by `npm run docs:endpoints` (scripts/endpoint-docs.ts) from edge/http/routes.ts: edit that, not " +
    "this list. -->";
  return [BEGIN, note, "", "| endpoint | what | served |", "|---|---|---|", ...rows, "", END].join("\n");
}

/** The document's text with its list written anew; throws when it has no markers. */
export function withEndpoints(file: string, text: string): string {
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${file}: no ${BEGIN} … ${END}`);
  return text.slice(0, begin) + endpointTable(file) + text.slice(end + END.length);
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  for (const file of ENDPOINT_DOCS) {
    writeFileSync(file, withEndpoints(file, readFileSync(file, "utf8")));
    console.error(`wrote the endpoints of ${file}`);
  }
}
