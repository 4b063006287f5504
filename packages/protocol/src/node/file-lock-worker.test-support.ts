// One of the processes file-lock.test.ts races: it adds 1 to a shared counter `turns` times under the lock,
// and two turns in three dies holding it (its lock left behind naming a process that no longer runs), so the
// others keep taking over a dead holder's lock at the same moment. Waits for the `go` file to start.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { withFileLock } from './file-lock.js';

const [lock, counter, go, turns, deadPid] = process.argv.slice(2) as [string, string, string, string, string];
await writeFile(`${go}.ready-${process.pid}`, '');
while (!existsSync(go)) await new Promise((r) => setTimeout(r, 1));
for (let turn = 0; turn < Number(turns); turn++) {
  await withFileLock(
    lock,
    async () => {
      const n = Number(await readFile(counter, 'utf8'));
      await new Promise((r) => setTimeout(r, 1));
      await writeFile(counter, String(n + 1));
      if (turn % 3 !== 2) await writeFile(lock, `${deadPid} ${hostname()} crashed-${turn}\n`);
    },
    { waitMs: 30_000 },
  );
}
