import type { SafetyFinding } from '@atskills/protocol';
import { type SkillContent, scanSkillContent } from '@atskills/protocol/content';
import { answerFromThread, type ThreadAnswer } from '../../runtime/worker-thread.js';

/** What the safety scan reads of a skill's content. */
export type ScanInput = Pick<SkillContent, 'files' | 'blobs' | 'description'>;

/** What the scan thread answers. */
export type ScanThreadAnswer = ThreadAnswer<SafetyFinding[][]>;

/**
 * Bytes of file content scanned on the event loop; more go to a worker thread. The scan's patterns read up
 * to 300 characters after each command word, so its time depends on what the text holds: a plain MiB
 * takes about 35 ms, a MiB of `curl ` repeated with a secret path at the end about 0.35 s, and a publish
 * may unpack 50 MiB, which held every other request of the hub for 47 s (docs/security.md). Under this, a
 * hostile text holds the loop about 0.1 s at most; a thread costs ~50 ms to start, more than small
 * collections' scans.
 */
export const INLINE_SCAN_BYTES = 256 * 1024;

/** Scans run one at a time in their threads: two large publishes at once do not double the memory. */
let queue: Promise<unknown> = Promise.resolve();

/**
 * `scanSkillContent` of every content, in order: on this thread when their bytes are few
 * (INLINE_SCAN_BYTES), else in a worker thread, so that a large or hostile publish keeps no other request
 * waiting.
 */
export async function scanContents(
  contents: readonly ScanInput[],
  inlineBytes = INLINE_SCAN_BYTES,
): Promise<SafetyFinding[][]> {
  const bytes = contents.reduce((sum, c) => sum + c.blobs.reduce((s, b) => s + b.content.byteLength, 0), 0);
  if (bytes <= inlineBytes) return contents.map((content) => scanSkillContent(content));
  // Only what the scan reads crosses to the thread (a copy of each blob).
  const inputs = contents.map(({ files, blobs, description }) => ({ files, blobs, description }));
  const run = queue.then(() => scanInThread(inputs));
  queue = run.catch(() => undefined);
  return run;
}

function scanInThread(contents: readonly ScanInput[]): Promise<SafetyFinding[][]> {
  return answerFromThread(import.meta.url, './scan-thread-worker', contents, 'the safety scan thread');
}
