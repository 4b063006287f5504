import type { ReportEntry } from '@atskills/db';
import type { Logger } from 'pino';

/** Where a job's git processes go and what each of them gets (the token never reaches a log line). */
export interface GitRemote {
  url: string;
  token?: string;
  signal: AbortSignal;
}

/** What the pipeline's phases share with the job that runs them: its log and the problems they note. */
export interface PipelineRun {
  log: Logger;
  /** Problems worth telling the author that do not keep a skill out (symlinked SKILL.md, over-cap). */
  warnings: ReportEntry[];
  /** Problems that keep a skill (or a file of it) out of the index. */
  errors: ReportEntry[];
  /** Logs that a phase ended, with the time since the job started. */
  phaseDone(name: string): void;
}

/** A run whose phase timings count from `startedAt`. */
export function pipelineRun(log: Logger, startedAt: Date): PipelineRun {
  return {
    log,
    warnings: [],
    errors: [],
    phaseDone: (name) => log.debug({ phase: name, ms: Date.now() - startedAt.getTime() }, 'phase done'),
  };
}

/** A path under the folder the skills live in, as a path of the repository (what reports name). */
export function inRepository(folder: string, path: string): string {
  return folder === '' ? path : path === '' ? folder : `${folder}/${path}`;
}
