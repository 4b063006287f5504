import type { CrawlRunProgress } from '@atskills/db';

/** One-line summary of a run's progress: done/total, skills, errors, rate and ETA. */
export function formatProgress(p: CrawlRunProgress, now = Date.now()): string {
  const elapsedS = Math.max(0.001, (now - p.startedAt.getTime()) / 1000);
  const total = p.repositoriesTotal < 0 ? '?' : String(p.repositoriesTotal);
  const rate = p.repositoriesDone / elapsedS;
  const left = p.repositoriesTotal < 0 ? null : p.repositoriesTotal - p.repositoriesDone;
  const eta = left === null || rate === 0 ? '?' : formatDuration(left / rate);
  return (
    `repositories ${p.repositoriesDone}/${total} · skills ${p.skillsFound} · errors ${p.errors}` +
    ` · ${rate.toFixed(1)} repos/s · ETA ${eta} · ${formatBytes(p.bytesDownloaded)} downloaded`
  );
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  const m = Math.floor(seconds / 60);
  return `${m}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * Shows progress: on a terminal one line rewritten in place, otherwise a plain line whenever the
 * number of finished repositories changes (so logs stay readable in CI).
 */
export function progressReporter(stream: NodeJS.WriteStream = process.stderr) {
  let lastDone = -1;
  return {
    update(p: CrawlRunProgress) {
      if (stream.isTTY) {
        stream.write(`\r\x1b[2K${formatProgress(p)}`);
      } else if (p.repositoriesDone !== lastDone) {
        stream.write(`${formatProgress(p)}\n`);
      }
      lastDone = p.repositoriesDone;
    },
    done() {
      if (stream.isTTY) stream.write('\n');
    },
  };
}
