/**
 * Suggestions for messages in other languages, over shared-corpus repositories that hold skills written in
 * Spanish and German (OthmanAdi/planning-with-files's translations) beside English ones. Before their
 * function words were set aside (suggest/language.ts), "de", "la", "con", "las" matched the Spanish skill,
 * which led Spanish requests whatever they asked and answered an Italian question about crocodiles.
 */
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
    for (const message of [
      'gracias, ¡funcionó perfecto!',
      'qual è la differenza tra un coccodrillo e un alligatore?',
      'quelle heure est-il à Tokyo en ce moment ?',
      '¿cuál es la diferencia entre un cocodrilo y un caimán?',
    ]) {
      expect((await ask(message)).abstained, message).toBe(true);
    }
  });

  it('still finds a skill through the words a request borrows from English', async () => {
    const answer = await ask('peux-tu écrire les notes de version à partir des commits git ?');
    expect(answer.results[0]?.hit.identity).toBe('gh:ComposioHQ/awesome-claude-skills/changelog-generator');
  });
});
