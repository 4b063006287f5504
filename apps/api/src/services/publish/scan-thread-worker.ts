/**
 * The publish scan's thread (scan-thread.ts starts it): the safety scan of every skill it is given, then
 * it exits.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { scanSkillContent } from '@atskills/protocol/content';
import type { ScanInput, ScanThreadAnswer } from './scan-thread.js';

let answer: ScanThreadAnswer;
try {
  answer = { result: (workerData as ScanInput[]).map((content) => scanSkillContent(content)) };
} catch (err) {
  answer = { error: (err as Error).message ?? String(err) };
}
parentPort?.postMessage(answer);
