import {
  type Database,
  type UnchangedReportResult,
  type UnchangedReportWrite,
  writeUnchangedReports,
} from '@atskills/db';

interface Waiting {
  entry: UnchangedReportWrite;
  resolve(result: UnchangedReportResult): void;
  reject(error: unknown): void;
}

/**
 * The reports of unchanged repositories, written together: every job that finds its repository unchanged
 * hands its report here and waits for it to be committed. While one batch is being written the next one
 * collects, so n concurrent unchanged jobs cost about n/concurrency transactions instead of n, without a
 * timer. After each batch, `completed` is called with the runs that got a report (to finish them).
 */
export class UnchangedReportBatch {
  private readonly queue: Waiting[] = [];
  private flushing = false;

  constructor(
    private readonly db: Database,
    private readonly completed: (runIds: number[]) => Promise<unknown>,
    private readonly maxBatch = 500,
  ) {}

  /** Resolves once the report is committed (and its run completed when it was the run's last). */
  write(entry: UnchangedReportWrite): Promise<UnchangedReportResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ entry, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // Jobs whose REST answers arrived in the same turn of the event loop join the first batch.
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const results = await writeUnchangedReports(
          this.db,
          batch.map((w) => w.entry),
        );
        const runIds = new Set<number>();
        for (const [i, w] of batch.entries()) {
          if (results[i]!.written && w.entry.runId !== null) runIds.add(w.entry.runId);
        }
        if (runIds.size > 0) await this.completed([...runIds]);
        for (const [i, w] of batch.entries()) w.resolve(results[i]!);
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.flushing = false;
  }
}
