import { describe, expect, it } from 'vitest';
import { textWords } from '../search/relevance/analyze.js';
import { intoEnglish } from './foreign-terms.js';
import { foreignFunctionWords } from './language.js';
import { extractNeeds, taskSignal } from './needs.js';

const setAside = (message: string) => foreignFunctionWords(textWords(message)).functionWords;

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
  it('keeps a Spanish message’s content words, its words of the field read as English, and leaves out its function words', () => {
    const needs = extractNeeds('necesito convertir este PDF a markdown con las tablas');
    // convertir: convert; tablas, through its stem (tabl): table.
    expect(needs.words).toEqual(expect.arrayContaining(['convert', 'pdf', 'markdown', 'table']));
    for (const w of ['con', 'las', 'tablas', 'convertir']) expect(needs.words).not.toContain(w);
    // What each was read as: a suggestion quotes the message's own words through it.
    expect(needs.readAs.get('tablas')).toEqual(['table']);
    expect(needs.readAs.has('con')).toBe(false);
    // Phrases first, in any of the five languages; words typed without their accents too.
    expect(extractNeeds('haz una auditoria SEO: investigación de palabras clave').words).toEqual(
      expect.arrayContaining(['audit', 'seo', 'research', 'keyword']),
    );
    expect(extractNeeds('crie uma base de dados para os usuários do projeto').words).toEqual(
      expect.arrayContaining(['database', 'user', 'project']),
    );
    expect(
      extractNeeds('Kannst du meinen Code auf Sicherheitslücken prüfen und die Datenbank migrieren?').words,
    ).toEqual(expect.arrayContaining(['code', 'review', 'database', 'migrate']));
  });

  it('reads a word of another language as English only in a message read as that language', () => {
    // "red" is Spanish for network, "base" a word of "base de datos": an English message keeps its words.
    expect(extractNeeds('make the red button call the base API once').words).toEqual(
      expect.arrayContaining(['red', 'button', 'base', 'api']),
    );
    expect(intoEnglish(['tablas'], [], new Set()).words).toEqual(['tablas']);
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

describe('need extraction in Chinese, Japanese and Korean', () => {
  it('finds the words of a request, its function words and politeness left out', () => {
    expect(extractNeeds('帮我规划这个项目，拆解任务并跟踪进度').words).toEqual([
      '规划',
      '项目',
      '拆解',
      '任务',
      '跟踪',
      '进度',
    ]);
    expect(extractNeeds('このプロジェクトのタスクを分解して計画を立ててください').words).toEqual([
      'プロジェクト',
      'タスク',
      '分解',
      // Chinese characters are read in simplified form, Japanese kanji too (both sides of a match alike).
      '计画',
      '立て',
    ]);
    // A Korean word keeps its endings ("변환해줘": convert, please): no analyzer here takes them off.
    expect(extractNeeds('PDF를 Word로 변환해줘').words).toEqual(['pdf', 'word', '변환해줘']);
  });

  it('reads the sentences of a message ended by full-width punctuation, and requests joined by "then"', () => {
    const needs = extractNeeds(
      '把合同PDF里的表格提取出来导出成Excel文件，然后把每个条款翻译成英文并整理成摘要。',
    );
    expect(needs.parts.map((p) => p.words)).toEqual([
      ['合同', 'pdf', '表格', '提取', '导出', 'excel', '文件'],
      ['条款', '翻译', '英文', '整理', '摘要'],
    ]);
  });

  it('reads thanks and greetings as small talk', () => {
    for (const message of [
      '谢谢，问题解决了！',
      'ありがとうございます、うまくいきました',
      '고마워요, 잘 됐어요!',
      '你好',
    ])
      expect(taskSignal(message).smallTalk, message).toBe(true);
    expect(taskSignal('帮我规划这个项目，拆解任务并跟踪进度').smallTalk).toBe(false);
  });
});
