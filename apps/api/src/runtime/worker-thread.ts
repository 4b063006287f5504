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

/** What a one-answer thread posts: its result, or why it has none. */
export type ThreadAnswer<T> = { result: T } | { error: string };

/**
 * Runs `module` in a worker thread (startWorkerThread) that posts one ThreadAnswer and exits: resolves with
 * its result; rejects with `what` failed and why (its error, a crash, an exit without an answer, or
 * `signal`, which stops the thread).
 */
export function answerFromThread<T>(
  callerUrl: string,
  module: string,
  workerData: unknown,
  what: string,
  signal?: AbortSignal,
): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new Error(`${what} was stopped`));
      return;
    }
    const worker = startWorkerThread(callerUrl, module, workerData);
    const stop = () => void worker.terminate();
    signal?.addEventListener('abort', stop, { once: true });
    let answer: ThreadAnswer<T> | undefined;
    let failure: Error | undefined;
    worker.once('message', (message: ThreadAnswer<T>) => {
      answer = message;
    });
    worker.once('error', (err) => {
      failure = err;
    });
    worker.once('exit', (code) => {
      signal?.removeEventListener('abort', stop);
      if (answer && 'result' in answer) resolve(answer.result);
      else {
        const why =
          (answer && 'error' in answer ? answer.error : undefined) ??
          failure?.message ??
          (signal?.aborted ? 'stopped' : `exited with code ${code}`);
        reject(new Error(`${what} failed: ${why}`));
      }
    });
  });
}
