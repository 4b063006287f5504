import { describe, expect, it } from 'vitest';
import { textWords } from '../search/relevance/analyze.js';
import { foreignFunctionWords } from './language.js';
import { extractNeeds } from './needs.js';

const setAside = (message: string) => foreignFunctionWords(textWords(message));

describe('foreignFunctionWords', () => {
  it('sets nothing aside in English, loanwords and all', () => {
    for (const message of [
      'write release notes from my git commits since the last tag',
      'the man page says the process will die if the door sensor is off, per se a bug?',
      'Is this de facto the standard, vis-à-vis the old API? la la land of configs',
      'pdf tables',
      'convert the PDF to markdown, con las tablas',
      'thanks!',
    ]) {
      expect([...setAside(message)], message).toEqual([]);
    }
  });

  it('reads the language of a message by its function words and sets them aside', () => {
    const cases: [string, string[]][] = [
      ['necesito convertir este PDF a markdown con las tablas', ['con', 'las']],
      ['peux-tu écrire les notes de version à partir des commits git ?', ['les', 'des']],
      ['Kannst du meinen Pull Request auf Sicherheitslücken prüfen?', ['du', 'meinen', 'auf']],
      ['preciso de um gráfico de barras com as vendas por mês', ['um', 'com', 'as']],
      ['puoi scrivere le note di rilascio dai commit git?', ['di', 'dai']],
      ['kun je de release notes schrijven van de commits?', ['je', 'van']],
      ['напиши заметки о выпуске из коммитов git', ['о', 'из']],
    ];
    for (const [message, words] of cases) {
      const aside = setAside(message);
      for (const w of words) expect(aside.has(w), `${w} in ${message}`).toBe(true);
      // Content words stay: what the message asks for.
      for (const w of ['pdf', 'markdown', 'git', 'commits', 'release', 'notes', 'gráfico'])
        expect(aside.has(w), `${w} in ${message}`).toBe(false);
    }
  });

  it('needs two of a language’s own function words, and more than the English ones', () => {
    expect(setAside('pdf de').size).toBe(0);
    expect(setAside('fix the tests and the build, de las').size).toBe(0);
    expect(setAside('convertir este pdf con las tablas').size).toBeGreaterThan(0);
  });
});

describe('need extraction in another language', () => {
  it('keeps a Spanish message’s content words and leaves out its function words', () => {
    const needs = extractNeeds('necesito convertir este PDF a markdown con las tablas');
    expect(needs.words).toEqual(expect.arrayContaining(['pdf', 'markdown', 'tablas']));
    for (const w of ['con', 'las']) expect(needs.words).not.toContain(w);
  });

  it('reads an English message as before', () => {
    const message = 'convert the PDF to markdown with the tables, and then write release notes';
    expect(extractNeeds(message).words).toEqual([
      'convert',
      'pdf',
      'markdown',
      'tables',
      'write',
      'release',
      'notes',
    ]);
  });
});
