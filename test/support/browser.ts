// The browser the page tests drive: the headless Chromium that the `@sparticuz/chromium` dev
// dependency ships inside its npm package (no download), extracted once to the temp folder and
// launched through playwright-core with the flags this machine's closed network needs.
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Chromium from "@sparticuz/chromium";
import { chromium, type Browser } from "playwright-core";

/** The pinned version in package.json: each version is extracted to its own folder. */
const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    devDependencies: Record<string, string>;
  }
).devDependencies["@sparticuz/chromium"];

/**
 * Without these, Chromium calls out at start (updates, sync, field trials) and this machine's
 * closed network refuses each call. playwright-core adds --headless and a new empty
 * --user-data-dir of its own to every launch.
 */
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * The package extracts into os.tmpdir(), which it reads as it starts: pointed at a fresh folder,
 * it extracts there, and the folder is renamed into place once complete, so that a run stopped
 * half-way or a second run at the same time never leaves a truncated browser behind.
 */
async function extractChromium(folder: string): Promise<void> {
  const stage = mkdtempSync(join(tmpdir(), "chromium-extract-"));
  const previous = process.env["TMPDIR"];
  process.env["TMPDIR"] = stage;
  let extracting: Promise<string>;
  try {
    extracting = Chromium.executablePath();
  } finally {
    if (previous === undefined) delete process.env["TMPDIR"];
    else process.env["TMPDIR"] = previous;
  }
  await extracting;
  writeFileSync(join(stage, ".complete"), "");
  try {
    renameSync(stage, folder);
  } catch (error) {
    rmSync(stage, { recursive: true, force: true });
    if (!existsSync(join(folder, ".complete"))) throw error;
  }
}

/** CHROMIUM_PATH if set, else the shipped build, extracted on first use (a few seconds). */
export async function chromiumPath(): Promise<string> {
  const chosen = process.env["CHROMIUM_PATH"];
  if (chosen !== undefined && chosen !== "") return chosen;
  const folder = join(tmpdir(), `sparticuz-chromium-${VERSION ?? "unknown"}`);
  if (!existsSync(join(folder, ".complete"))) await extractChromium(folder);
  return join(folder, "chromium");
}

/** A headless Chromium, ready for pages. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: await chromiumPath(), headless: true, args: FLAGS });
}
