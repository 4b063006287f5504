/** The reason a job's signal carries when the worker shuts down: the job is released, not failed. */
export class ShutdownError extends Error {
  override name = 'ShutdownError';
  constructor() {
    super('the worker is shutting down');
  }
}

/** Whether a signal was aborted by a shutdown (as opposed to a job timeout). */
export function abortedByShutdown(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof ShutdownError;
}
