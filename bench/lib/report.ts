import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Folder of the benchmark results (committed). */
export const resultsDir = path.resolve(import.meta.dirname, '..', 'results');

/** What machine a figure was measured on. */
export function machineInfo() {
  let postgres = 'unknown';
  try {
    postgres = execFileSync('psql', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    // psql missing: leave unknown
  }
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    postgres,
    date: new Date().toISOString(),
  };
}

export interface BenchRow {
  [column: string]: string | number | boolean | null;
}

/** Writes bench/results/<name>.json and prints the rows as a table. */
export function writeResult(name: string, rows: BenchRow[], extra: Record<string, unknown> = {}): string {
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${name}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ benchmark: name, machine: machineInfo(), ...extra, rows }, null, 2)}\n`,
  );
  printTable(rows);
  console.log(`\nwrote ${path.relative(process.cwd(), file)}`);
  return file;
}

/** Prints rows as an aligned text table. */
export function printTable(rows: BenchRow[]): void {
  if (rows.length === 0) return;
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v: unknown) => (v === null || v === undefined ? '' : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ');
  console.log(line(columns));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(columns.map((c) => cell(r[c]))));
}
