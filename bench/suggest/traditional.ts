/**
 * Writes bench/suggest/messages.traditional.json: every simplified Chinese message of
 * messages.foreign.json written in traditional characters with Taiwan's words (OpenCC's `cn` -> `twp`:
 * 文件 becomes 檔案, 软件 軟體, 数据库 資料庫), with the same judgement. A machine's rewriting, not a
 * person's: it measures whether the hub reads traditional Chinese as well as simplified, not how people in
 * Taiwan or Hong Kong put a request. `npx tsx bench/suggest/traditional.ts`
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as OpenCC from 'opencc-js/cn2t';
import type { MessageFile } from './messages.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const source = JSON.parse(readFileSync(path.join(here, 'messages.foreign.json'), 'utf8')) as MessageFile;
const toTraditional = OpenCC.Converter({ from: 'cn', to: 'twp' });

const messages = source.messages
  .filter((m) => (m.language ?? m.translates?.split(':')[0]) === 'zh')
  .map((m) => ({
    id: m.id,
    kind: m.kind,
    message: toTraditional(m.message),
    relevant: m.relevant,
    ...(m.needs ? { needs: m.needs } : {}),
    language: 'zht',
  }));

const file: MessageFile = {
  about:
    'The simplified Chinese messages of messages.foreign.json (same ids, same judgements) rewritten in ' +
    "traditional characters with Taiwan's words by OpenCC (opencc-js, cn -> twp), by bench/suggest/traditional.ts. " +
    "A machine's rewriting: it measures whether traditional Chinese is read as well as simplified. Never fitted on.",
  aliases: source.aliases,
  messages,
};
writeFileSync(path.join(here, 'messages.traditional.json'), `${JSON.stringify(file, null, 2)}\n`);
console.log(`wrote ${messages.length} messages`);
