import { type ChildProcess, fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import type { SafetyFinding } from '@atskills/protocol';
import {
  type SkillContent,
  type SkillContentInput,
  scanSkillContent,
  skillContent,
} from '@atskills/protocol/content';

type ScanInput = Pick<SkillContent, 'files' | 'blobs' | 'description'>;

/** A message to a content worker. */
export type ContentRequest =
  | { kind: 'content'; id: number; inputs: SkillContentInput[] }
  | { kind: 'scan'; id: number; contents: ScanInput[] };

/** A content worker's answer. */
export type ContentResponse =
  | { id: number; ok: true; result: SkillContent[] | SafetyFinding[][] }
  | { id: number; ok: false; message: string };

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

interface PoolProcess {
  worker: ChildProcess;
  pending: Map<number, Pending>;
}

/**
 * Content processes a crawler starts by default: one per core, at most 4 (each holds the tokenizer's
 * tables, ~100 MiB). The event loop mostly waits on git and the database, so it needs no core of its own.
 */
export function defaultContentProcesses(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

/** A buffer received from a content process (a Uint8Array after the copy) as a Buffer over the same bytes. */
const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * Builds skills' content (`skillContent`: parse, token counts, hashes) and runs safety scans in child
 * processes. Both are pure CPU (the tokenizer and the scanner's rules were 35-45% of a full crawl's main
 * thread), and on the event loop they held up every other job's git, REST and database work. Processes,
 * not worker threads: a thread's heap (the tokenizer's tables among it) is the crawler's memory, and Node
 * forks the whole crawler for each git process it starts, so every MiB of it made each of the crawl's
 * thousands of git processes slower to start (a thread took the fork from 14 to 35 ms). Jobs send their
 * folders in chunks, each to the process with the least work queued. With `size` 0 everything runs
 * inline. Hand-written over child_process.fork: the pool libraries (piscina, tinypool) are not in the
 * workspace's dependencies, and the work is two message kinds.
 */
export class ContentPool {
  private readonly processes: PoolProcess[] = [];
  private nextId = 1;
  private closed = false;
  private inlineTail: Promise<unknown> = Promise.resolve();

  constructor(readonly size: number) {}

  /** `skillContent(input, { scan: false })` of every input, in order. */
  async content(inputs: SkillContentInput<Buffer>[]): Promise<SkillContent<Buffer>[]> {
    if (inputs.length === 0) return [];
    if (this.size === 0)
      return this.inline(() => inputs.map((input) => skillContent(input, { scan: false })));
    const result = (await this.send({ kind: 'content', id: 0, inputs })) as SkillContent[];
    return result.map((content) => ({
      ...content,
      blobs: content.blobs.map((blob) => ({ ...blob, content: asBuffer(blob.content) })),
    }));
  }

  /** `scanSkillContent` of every content, in order. */
  async scan(contents: ScanInput[]): Promise<SafetyFinding[][]> {
    if (contents.length === 0) return [];
    if (this.size === 0) return this.inline(() => contents.map((content) => scanSkillContent(content)));
    return (await this.send({ kind: 'scan', id: 0, contents })) as SafetyFinding[][];
  }

  /** Ends the processes; work still queued fails. */
  async close(): Promise<void> {
    this.closed = true;
    const processes = this.processes.splice(0);
    for (const child of processes) {
      child.worker.kill();
      for (const waiting of child.pending.values()) waiting.reject(new Error('the content pool is closed'));
    }
  }

  /**
   * Inline work, one chunk per turn of the event loop: I/O (BullMQ's lock renewals among it) runs between
   * chunks, as a blocked loop loses the lock and the job is taken as stalled.
   */
  private inline<T>(work: () => T): Promise<T> {
    const result = this.inlineTail.then(
      () =>
        new Promise<T>((resolve, reject) =>
          setImmediate(() => {
            try {
              resolve(work());
            } catch (error) {
              reject(error);
            }
          }),
        ),
    );
    this.inlineTail = result.catch(() => undefined);
    return result;
  }

  private send(request: ContentRequest): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the content pool is closed'));
    const child = this.leastBusy();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // A content process with work keeps the crawler alive (its answer is awaited); an idle one does not.
      if (child.pending.size === 0) setHeld(child.worker, true);
      child.pending.set(id, { resolve, reject });
      child.worker.send({ ...request, id });
    });
  }

  private leastBusy(): PoolProcess {
    if (this.processes.length < this.size) {
      const idle = this.processes.find((p) => p.pending.size === 0);
      if (idle) return idle;
      return this.start();
    }
    return this.processes.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  }

  private start(): PoolProcess {
    // From the sources (tests, the benchmark) the worker is TypeScript: tsx loads it, and the source
    // condition makes the workspace packages resolve to their sources as in the parent.
    const fromSources = import.meta.url.endsWith('.ts');
    const worker = fork(
      new URL(fromSources ? './content-worker.ts' : './content-worker.js', import.meta.url),
      [],
      {
        execArgv: fromSources
          ? [...process.execArgv, '--import', 'tsx', '--conditions=@atskills/source']
          : process.execArgv,
        // Buffers and Maps cross the channel as they are (the default JSON would not carry bytes).
        serialization: 'advanced',
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    setHeld(worker, false);
    const child: PoolProcess = { worker, pending: new Map() };
    worker.on('message', (response: ContentResponse) => {
      const waiting = child.pending.get(response.id);
      if (!waiting) return;
      child.pending.delete(response.id);
      if (child.pending.size === 0) setHeld(child.worker, false);
      if (response.ok) waiting.resolve(response.result);
      else waiting.reject(new Error(`content worker: ${response.message}`));
    });
    const fail = (error: Error) => {
      // A dead process fails its queued work (the jobs retry) and is replaced on the next request.
      const index = this.processes.indexOf(child);
      if (index >= 0) this.processes.splice(index, 1);
      for (const waiting of child.pending.values()) waiting.reject(error);
      child.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code, signal) => fail(new Error(`content worker exited with ${signal ?? code}`)));
    this.processes.push(child);
    return child;
  }
}

/** A content process with work keeps the crawler alive (its answer is awaited); an idle one does not. */
function setHeld(worker: ChildProcess, held: boolean): void {
  if (held) {
    worker.ref();
    worker.channel?.ref();
  } else {
    worker.unref();
    worker.channel?.unref();
  }
}
