// Results as JSON (latest.json plus a timestamped copy) and the comparison with the run before.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ROOT } from "./peer-paths.js";
import { fmt } from "./table.js";

export interface ResultsFile {
  readonly version: 1;
  readonly startedAt: string;
  readonly finishedAt: string;
  /** Headline figures by name, for comparing runs. */
  readonly headline: Record<string, number>;
  readonly [section: string]: unknown;
}

export function resultsDir(out: string): string {
  return resolve(ROOT, out);
}

export function readPrevious(out: string): ResultsFile | undefined {
  const file = join(resultsDir(out), "latest.json");
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as ResultsFile;
  } catch {
    return undefined;
  }
}

/** Writes latest.json and results-<timestamp>.json; returns their paths. */
export function writeResults(out: string, results: ResultsFile): string[] {
  const dir = resultsDir(out);
  mkdirSync(dir, { recursive: true });
  const finite = (_key: string, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? null : v);
  const text = `${JSON.stringify(results, finite, 2)}\n`;
  const stamp = results.startedAt.replace(/[:.]/g, "-");
  const files = [join(dir, "latest.json"), join(dir, `results-${stamp}.json`)];
  for (const file of files) writeFileSync(file, text);
  return files;
}

/** A markdown table of the headline figures now and in `previous`. */
export function compare(previous: ResultsFile, now: ResultsFile): string {
  const rows = Object.entries(now.headline).map(([name, value]) => {
    const before = previous.headline[name];
    const change =
      before !== undefined && before !== null && before !== 0
        ? `${fmt(((value - before) / Math.abs(before)) * 100)}%`
        : "–";
    return `| ${name} | ${fmt(before ?? Number.NaN, 2)} | ${fmt(value, 2)} | ${change} |`;
  });
  return [
    `Compared with the run of ${previous.startedAt}:`,
    "",
    "| figure | before | now | change |",
    "| --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}
