// Replaces functions of node:fs/promises for one test: named imports elsewhere (file-lock.ts, cache.ts) see
// the replacement too (syncBuiltinESMExports), so a test can inject answers this machine does not give, or
// count what the code under test reads. `restoreFs` (afterEach) puts every original back.
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';

export type Fs = typeof fsp;
const originals = new Map<keyof Fs, unknown>();

/** Replaces one node:fs/promises function until `restoreFs`; `make` gets the original to call through. */
export function injectFs<K extends keyof Fs>(name: K, make: (real: Fs[K]) => Fs[K]): void {
  if (!originals.has(name)) originals.set(name, fsp[name]);
  (fsp as Record<K, Fs[K]>)[name] = make(originals.get(name) as Fs[K]);
  syncBuiltinESMExports();
}

/** Puts back every function `injectFs` replaced. */
export function restoreFs(): void {
  for (const [name, real] of originals) (fsp as Record<string, unknown>)[name] = real;
  originals.clear();
  syncBuiltinESMExports();
}
