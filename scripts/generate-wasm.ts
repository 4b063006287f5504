/**
 * Compiles the WebAssembly kernels (apps/api/src/suggest/int8-dots.wat) into the TypeScript modules that
 * carry their bytes (int8-dots.wasm.ts), so the hub loads them with no build step and no file to copy.
 * Run `npm run wasm` after changing a .wat file; a test fails while the committed bytes differ.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import initWabt from 'wabt';

/** The kernels: their source, and the module that carries their compiled bytes. */
export const KERNELS = [
  {
    wat: path.resolve(import.meta.dirname, '..', 'apps/api/src/suggest/int8-dots.wat'),
    module: path.resolve(import.meta.dirname, '..', 'apps/api/src/suggest/int8-dots.wasm.ts'),
    constant: 'INT8_DOTS_WASM',
  },
] as const;

/** The TypeScript module carrying a kernel's compiled bytes, exactly as it should be committed. */
export async function renderKernel(kernel: (typeof KERNELS)[number]): Promise<string> {
  const wabt = await initWabt();
  const source = await readFile(kernel.wat, 'utf8');
  const parsed = wabt.parseWat(path.basename(kernel.wat), source, { simd: true });
  try {
    parsed.validate();
    const { buffer } = parsed.toBinary({});
    const base64 = Buffer.from(buffer).toString('base64');
    return [
      `// generated from ${path.basename(kernel.wat)}, do not edit, run npm run wasm`,
      `export const ${kernel.constant} =`,
      `  '${base64}';`,
      '',
    ].join('\n');
  } finally {
    parsed.destroy();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const kernel of KERNELS) {
    const text = await renderKernel(kernel);
    await writeFile(kernel.module, text);
    console.log(`wrote ${path.relative(process.cwd(), kernel.module)} (${text.length} bytes)`);
  }
}
