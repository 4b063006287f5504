/**
 * Jobs held the way workers that die hold them: taken through BullMQ's manual getNextJob and never
 * extended, so their locks lapse. Three deaths per job, one past BullMQ's stall limit (maxStalledCount 2):
 * the first two put a job back to wait, the third marks it for failure by the next worker's stall check.
 */
import { Queue, Worker } from 'bullmq';

/**
 * Adds jobs to `queueName` (through `add`, which returns how many) and lets each be held three times by a
 * dying worker. One holder holds them all: a holder of its own per job would, by its stall check, fail the
 * jobs stalled before it, in place of the worker under test that starts afterwards.
 */
export async function stallPastLimit(
  redisUrl: string,
  prefix: string,
  queueName: string,
  add: (queue: Queue) => Promise<number>,
): Promise<void> {
  const queue = new Queue(queueName, { connection: { url: redisUrl }, prefix });
  const holder = new Worker(queueName, null, {
    connection: { url: redisUrl },
    prefix,
    lockDuration: 300,
    stalledInterval: 150,
    maxStalledCount: 2,
    autorun: false,
  });
  try {
    const jobs = await add(queue);
    let stalls = 0;
    holder.on('stalled', () => stalls++);
    await holder.startStalledCheckTimer();
    for (let death = 1; death <= 3; death++) {
      for (let j = 0; j < jobs; j++) {
        if (!(await holder.getNextJob(`dying-worker-${death}`))) {
          throw new Error(`no job to hold at death ${death}`);
        }
      }
      const deadline = Date.now() + 20_000;
      while (stalls < death * jobs) {
        if (Date.now() > deadline) throw new Error(`the jobs never stalled a ${death}. time`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } finally {
    await holder.close();
    await queue.close();
  }
}
