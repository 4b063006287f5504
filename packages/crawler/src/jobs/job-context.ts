/** Per-run state a queue gives a job function (the repository job's and the link job's alike). */
export interface JobContext {
  /** Aborted on the job timeout or on shutdown; git processes are killed with it. */
  signal: AbortSignal;
  /** True on the last attempt: a retryable failure is then recorded instead of thrown. */
  finalAttempt: boolean;
  /** Starts the job timeout again (once a git slot is taken: waiting for one is not the job's slowness). */
  restartTimeout?: () => void;
}
