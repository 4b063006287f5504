import { Worker } from 'node:worker_threads';

/**
 * A worker thread running `module` (a URL beside the caller's `import.meta.url`, named without its
 * extension): the compiled `.js` module, or, when the caller runs from TypeScript (tsx, vitest), the `.ts`
 * source through tsx's loader, resolving the workspace packages to their sources as this thread does.
 */
export function startWorkerThread(callerUrl: string, module: string, workerData: unknown): Worker {
  const fromSource = callerUrl.endsWith('.ts');
  const entry = new URL(`${module}.${fromSource ? 'ts' : 'js'}`, callerUrl);
  if (!fromSource) return new Worker(entry, { workerData });
  const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(boot, { eval: true, workerData, execArgv: ['--conditions=@atskills/source'] });
}
