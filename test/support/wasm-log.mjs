// Records every WebAssembly compilation a process starts, so a test can prove a path never compiles a module
// without timing anything. Load it with `--import <this file's URL>` and ATSKILLS_WASM_LOG=<file>: each
// compile/instantiate call appends one line to that file - the call and the stack frames that made it, joined
// by " | " - so a test can tell who compiled (undici's llhttp shows `node:internal/deps/undici`). Why it
// matters: V8 keeps optimising a compiled module on background threads, and Node waits for those jobs before
// the process exits. Plain JavaScript so it loads before tsx.
import { appendFileSync } from 'node:fs';

const log = process.env.ATSKILLS_WASM_LOG;

/** Appends `what` and the caller's stack to the log. */
function record(what) {
  const frames = (new Error().stack ?? '')
    .split('\n')
    .slice(3, 9)
    .map((line) => line.trim());
  appendFileSync(log, `${what} | ${frames.join(' | ')}\n`);
}

if (log) {
  for (const name of ['compile', 'compileStreaming', 'instantiate', 'instantiateStreaming']) {
    const original = WebAssembly[name];
    if (typeof original !== 'function') continue;
    WebAssembly[name] = function (...args) {
      record(`WebAssembly.${name}`);
      return original.apply(this, args);
    };
  }
  WebAssembly.Module = new Proxy(WebAssembly.Module, {
    construct(target, args, newTarget) {
      record('new WebAssembly.Module');
      return Reflect.construct(target, args, newTarget);
    },
  });
}
