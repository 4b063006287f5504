/**
 * The build half of `npm start`: builds the workspace with turbo package by package, in dependency order,
 * with a line per package, so the first start (minutes of TypeScript compiling) is not silent.
 * turbo's cache still applies per package: a package built before and unchanged is restored, not rebuilt.
 * The npm script then starts the hub (`node apps/api/dist/server.js`).
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
const TURBO = path.join(ROOT, 'node_modules', '.bin', 'turbo');

/** One package's build, as `turbo run build --dry=json` plans it. */
export interface BuildTask {
  /** The package name (`@atskills/db`). */
  name: string;
  /** Whether turbo has this exact build in its cache. */
  cached: boolean;
  /** Names of the packages it depends on. */
  dependsOn: string[];
}

/** Reads turbo's dry-run plan: every build task, its cache status and its dependencies. */
export function parsePlan(json: string): BuildTask[] {
  const plan = JSON.parse(json) as {
    tasks: { taskId: string; package: string; cache: { status: string }; dependencies?: string[] }[];
  };
  return plan.tasks.map((t) => ({
    name: t.package,
    cached: t.cache.status === 'HIT',
    dependsOn: (t.dependencies ?? []).map((id) => id.replace(/#build$/, '')),
  }));
}

/** The tasks in an order where each comes after its dependencies (ties by name, so the order is stable). */
export function buildOrder(tasks: BuildTask[]): BuildTask[] {
  const left = new Map(tasks.map((t) => [t.name, t]));
  const done = new Set<string>();
  const order: BuildTask[] = [];
  while (left.size > 0) {
    const ready = [...left.values()]
      .filter((t) => t.dependsOn.every((d) => done.has(d) || !left.has(d)))
      .sort((a, b) => a.name.localeCompare(b.name));
    if (ready.length === 0) throw new Error(`dependency cycle among ${[...left.keys()].join(', ')}`);
    for (const t of ready) {
      left.delete(t.name);
      done.add(t.name);
      order.push(t);
    }
  }
  return order;
}

/** The first line: how much there is to build and how long the first build takes. */
export function announce(tasks: BuildTask[]): string {
  const toBuild = tasks.filter((t) => !t.cached).length;
  if (toBuild === 0) return `all ${tasks.length} packages are built (turbo cache)`;
  const first = toBuild === tasks.length ? ' (the first build takes a few minutes)' : '';
  return `building ${toBuild} of ${tasks.length} packages${first}...`;
}

/** Runs turbo quietly: its output is kept and shown only when the build fails (the compiler's errors). */
function turbo(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(TURBO, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), output }));
  });
}

/**
 * Builds every task once its dependencies are built, `parallel` at a time, printing a line as each
 * finishes; stops at the first failure and prints its output.
 */
async function buildAll(tasks: BuildTask[], parallel: number): Promise<number> {
  const built = new Set<string>();
  const waiting = [...tasks];
  const running = new Map<string, Promise<void>>();
  let failed = 0;
  let finished = 0;
  while ((waiting.length > 0 || running.size > 0) && failed === 0) {
    for (const task of [...waiting]) {
      if (running.size >= parallel) break;
      if (!task.dependsOn.every((d) => built.has(d) || !tasks.some((t) => t.name === d))) continue;
      waiting.splice(waiting.indexOf(task), 1);
      const at = Date.now();
      running.set(
        task.name,
        // Without --only: the package's dependencies are in the run (cache hits by now), so its hash is
        // the one a whole `turbo run build` computes and the next start finds it in the cache.
        turbo(['run', 'build', `--filter=${task.name}`, '--output-logs=errors-only']).then(
          ({ code, output }) => {
            running.delete(task.name);
            const step = `[${++finished}/${tasks.length}] ${task.name}`;
            if (code !== 0) {
              process.stderr.write(`${output}\n${step}: build failed (turbo's output above)\n`);
              failed = code;
              return;
            }
            built.add(task.name);
            const took = ((Date.now() - at) / 1000).toFixed(1);
            // turbo's own summary says whether it compiled or restored (the plan can be stale by then).
            const counts = /Cached:\s+(\d+) cached, (\d+) total/.exec(output);
            const fromCache = counts !== null && counts[1] === counts[2];
            process.stdout.write(`${step}: ${fromCache ? 'from the cache' : `built in ${took}s`}\n`);
          },
        ),
      );
    }
    if (running.size === 0) break;
    await Promise.race(running.values());
  }
  await Promise.all(running.values());
  return failed;
}

async function main(): Promise<number> {
  const dry = spawnSync(TURBO, ['run', 'build', '--dry=json'], { cwd: ROOT, encoding: 'utf8' });
  if (dry.status !== 0) {
    process.stderr.write(dry.stderr);
    return dry.status ?? 1;
  }
  const tasks = buildOrder(parsePlan(dry.stdout));
  process.stdout.write(`${announce(tasks)}\n`);
  if (tasks.every((t) => t.cached)) {
    // Restores any dist/ folder removed since (a cache hit says nothing about the files on disk).
    const restored = await turbo(['run', 'build', '--output-logs=errors-only']);
    if (restored.code !== 0) process.stderr.write(restored.output);
    return restored.code;
  }
  const started = Date.now();
  // One at a time: runs that overlap would restore shared dependencies' dist/ under each other's compiler.
  const code = await buildAll(tasks, 1);
  if (code !== 0) return code;
  process.stdout.write(`built in ${((Date.now() - started) / 1000).toFixed(0)}s; starting the hub\n`);
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().then(
    (code) => process.exit(code),
    (err: Error) => {
      process.stderr.write(`build: ${err.message}\n`);
      process.exit(1);
    },
  );
}
