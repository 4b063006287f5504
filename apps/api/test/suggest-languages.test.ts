/**
 * Suggestions for messages in other languages, over shared-corpus repositories that hold skills written in
 * Spanish and German (OthmanAdi/planning-with-files's translations) beside English ones. Before their
 * function words were set aside (suggest/language.ts), "de", "la", "con", "las" matched the Spanish skill,
 * which led Spanish requests whatever they asked and answered an Italian question about crocodiles. The
 * repository's Chinese translations: a run of Chinese letters was one word to the analyzer (a clause between
 * two punctuation marks), so no Chinese request found them, and a request's Latin words glued to its Chinese
 * ones ("把这个PDF转换成Word") matched nothing either; and a request in Chinese or Japanese for a skill written
 * in English had only its Latin words to go on (translations.json gives the words of the field their English).
 */
import { UNLIKELY_SUGGESTION_BELOW } from '@atskills/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { createMemoryEngine } from '../src/search/memory-engine.js';
import { createPostgresEngine } from '../src/search/postgres.js';
import { createSuggestEngine, type SuggestAnswer, type SuggestEngine } from '../src/suggest/engine.js';
import { seedCorpus } from './support/seed.js';

const REPOS = ['OthmanAdi/planning-with-files', 'ComposioHQ/awesome-claude-skills', 'anthropics/skills'];
const TRANSLATED = /\/planning-with-files-(es|de|ar|zh|zht)$/;

let db: TestDatabase;
let memory: ReturnType<typeof createMemoryEngine>;
let engine: SuggestEngine;
const ask = (message: string): Promise<SuggestAnswer> =>
  engine.suggest(message, { isAdmin: false, readableNamespaces: [] }, 5);
const CHANGELOG = 'gh:ComposioHQ/awesome-claude-skills/changelog-generator';
/** Each message's first suggestion is `identity`. */
async function expectFirst(identity: string, messages: string[]): Promise<void> {
  for (const message of messages)
    expect((await ask(message)).results[0]?.hit.identity, message).toBe(identity);
}
/** Every message abstains. */
async function expectAbstains(messages: string[]): Promise<void> {
  for (const message of messages) expect((await ask(message)).abstained, message).toBe(true);
}

beforeAll(async () => {
  db = await createTestDatabase('suggest_languages');
  await seedCorpus(db.db, REPOS, {});
  memory = createMemoryEngine(db.db, createPostgresEngine(db.db), { maxBytes: 2 ** 30 });
  await memory.build();
  engine = createSuggestEngine(db.db, memory, { maxBytes: 2 ** 30 });
  await engine.build();
}, 240_000);
afterAll(async () => {
  await engine?.close();
  await memory?.close();
  await db?.drop();
});

describe('suggestions for messages in other languages', () => {
  it('does not answer requests with the skill written in their language because of its function words', async () => {
    for (const message of [
      'necesito un gráfico de barras con las ventas por mes',
      'escribe las notas de la versión a partir de los commits desde la última etiqueta',
      '¿puedes revisar mi pull request y buscar fallos de seguridad?',
      'peux-tu écrire les notes de version à partir des commits git ?',
    ]) {
      const answer = await ask(message);
      const first = answer.results[0]?.hit.identity ?? '';
      expect(first, message).not.toMatch(TRANSLATED);
    }
  });

  it('abstains on small talk and questions no skill answers, in any language', async () => {
    await expectAbstains([
      'gracias, ¡funcionó perfecto!',
      'qual è la differenza tra un coccodrillo e un alligatore?',
      'quelle heure est-il à Tokyo en ce moment ?',
      '¿cuál es la diferencia entre un cocodrilo y un caimán?',
    ]);
  });

  it('reads the words of the field of a Spanish, Portuguese, French, Italian or German request as English', async () => {
    await expectFirst(CHANGELOG, [
      'genera el registro de cambios a partir de los mensajes de confirmación desde la última versión',
      'erstelle das Änderungsprotokoll für die nächste Veröffentlichung aus dem Verlauf',
    ]);
    // The part of the request it answers is quoted in the request's own words, read through their English.
    const quoted = (await ask('genera el registro de cambios a partir del historial de git')).results[0]
      ?.matched;
    expect(quoted).toMatch(/registro de cambios|historial/);
  });

  it('still finds a skill through the words a request borrows from English', async () => {
    const answer = await ask('peux-tu écrire les notes de version à partir des commits git ?');
    expect(answer.results[0]?.hit.identity).toBe(CHANGELOG);
  });

  it('finds the skills written in Chinese for a request in Chinese, simplified or traditional', async () => {
    const simplified = await ask('帮我规划一个多步骤的研究项目：拆解任务、跟踪进度，把发现记录在文件里');
    expect(simplified.abstained).toBe(false);
    expect(simplified.results[0]?.hit.identity).toMatch(/\/planning-with-files-zh$/);
    const traditional = await ask('幫我規劃一個多步驟的專案：拆解任務、追蹤進度，把發現記錄在檔案裡');
    expect(traditional.results[0]?.hit.identity).toMatch(/\/planning-with-files-zht$/);
    // The part of the message a suggestion answers is quoted in the user's words.
    expect(simplified.results[0]?.matched).toMatch(/规划|任务|进度/);
    expect(traditional.results[0]?.matched).toMatch(/規劃|任務|進度/);
    // Traditional and simplified characters are read alike: each request finds the other translation too.
    for (const answer of [simplified, traditional]) {
      expect(
        answer.results
          .slice(0, 2)
          .map((r) => r.hit.identity)
          .sort(),
      ).toEqual([
        expect.stringMatching(/\/planning-with-files-zh$/),
        expect.stringMatching(/\/planning-with-files-zht$/),
      ]);
    }
  });

  it('searches the Latin words of a Chinese request as the same words typed alone, and Chinese words', async () => {
    const viewer = { isAdmin: false, readableNamespaces: [] };
    const identities = async (query: string) =>
      (await memory.search(query, {}, viewer, 5, undefined)).hits.map((h) => h.identity);
    const latin = await identities('pdf word');
    expect(latin.length).toBeGreaterThan(0);
    // Its Chinese words are no skill's, and its lone characters carry nothing: the Latin words decide.
    expect(await identities('把这个PDF转换成Word文档')).toEqual(latin);
    // Traditional and simplified characters are read alike: either spelling finds both translations.
    for (const query of ['任务规划', '任務規劃']) {
      expect((await identities(query)).slice(0, 2).sort(), query).toEqual([
        expect.stringMatching(/\/planning-with-files-zh$/),
        expect.stringMatching(/\/planning-with-files-zht$/),
      ]);
    }
  });

  it('abstains on thanks and questions no skill answers in Chinese, Japanese and Korean', async () => {
    await expectAbstains([
      '谢谢，问题解决了！',
      '鳄鱼和短吻鳄有什么区别？',
      'ありがとうございます、うまくいきました',
      '東京は今何時ですか？',
      '고마워요, 잘 됐어요!',
    ]);
  });

  it('finds a skill written in English for a request in Chinese, Japanese, Korean or Russian through the words of the field', async () => {
    await expectFirst(CHANGELOG, [
      '根据最近的提交写这次发布的更新日志',
      'git のコミット履歴から変更履歴を書いて',
      // Korean words carry their particles and endings (로그를, 작성해줘): the dictionary is read through their stems.
      '최근 커밋으로 이번 릴리스의 변경 로그를 작성해줘',
      // Russian words are declined (журнал изменений, коммитам): read by their Snowball stems.
      'напиши журнал изменений по последним коммитам для нового релиза',
    ]);
    // The part of the request it answers is quoted through the words the skill holds in English.
    const quoted = (await ask('git のコミット履歴から変更履歴を書いて')).results[0]?.matched;
    expect(quoted).toContain('コミット');
    const page = await memory.search(
      '更新日志',
      {},
      { isAdmin: false, readableNamespaces: [] },
      5,
      undefined,
    );
    expect(page.hits[0]?.identity).toBe(CHANGELOG);
  });

  it('reads a Chinese word of the field as its English word itself, so the skills holding it cover the request', async () => {
    // 品牌 brand, 主题 theme, 颜色 color, 字体 font: both skills about them score where the prompt hook
    // appends suggestions (read as a synonym, the theme skill scored under it).
    const answer = await ask('帮我设计一个新的品牌主题颜色和字体');
    const shown = answer.results
      .filter((r) => r.score >= UNLIKELY_SUGGESTION_BELOW)
      .map((r) => r.hit.identity);
    expect(shown).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/\/brand-guidelines$/),
        expect.stringMatching(/\/theme-factory$/),
      ]),
    );
  });
});
