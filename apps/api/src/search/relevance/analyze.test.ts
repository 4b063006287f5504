import { describe, expect, it } from 'vitest';
import { MEILI_SETTINGS } from '../meilisearch.js';
import {
  findSynonyms,
  joinTranslatedPhrases,
  leadingWords,
  nameKey,
  planWords,
  readForm,
  termOf,
  textWords,
  translationsOf,
  typoBudget,
  typoDistance,
  wordsAt,
} from './analyze.js';
import { koreanStems } from './korean-endings.js';

describe('query analysis', () => {
  it('counts a transposition as one typo and stops past the budget', () => {
    expect(typoDistance('desgin', 'design', 2)).toBe(1);
    expect(typoDistance('kubernets', 'kubernetes', 2)).toBe(1);
    expect(typoDistance('abc', 'xyzxyz', 1)).toBe(2);
    expect(typoBudget(3)).toBe(0);
    expect(typoBudget(5)).toBe(1);
    expect(typoBudget(9)).toBe(2);
  });

  it('finds synonym phrases, longest first', () => {
    const [match] = findSynonyms(['write', 'release', 'notes']);
    expect(match).toMatchObject({ start: 1, end: 3 });
    expect(match?.alternatives).toContainEqual(['changelog']);
    expect(findSynonyms(['k8s'])[0]?.alternatives).toContainEqual(['kubernetes']);
  });

  it('drops stop words unless the query holds nothing else', () => {
    expect(planWords('please help me fix my ci')).toMatchObject({
      words: ['fix', 'ci'],
      ignored: ['please', 'help', 'me', 'my'],
    });
    expect(planWords('the and').words).toEqual(['the', 'and']);
    expect(planWords('🎉 --- !!').words).toEqual([]);
  });

  it('compares names without case or separators and stems words', () => {
    expect(nameKey('Skill_Creator  v2')).toBe('skill-creator-v2');
    expect(termOf('conflicts')).toBe(termOf('conflict'));
  });

  it('gives Meilisearch the same synonyms, stop words and field order', () => {
    expect(MEILI_SETTINGS.synonyms.k8s).toEqual(['kubernetes']);
    expect(MEILI_SETTINGS.synonyms['pull request']).toContain('pr');
    expect(MEILI_SETTINGS.synonyms.更新日志).toEqual(['changelog']);
    expect(MEILI_SETTINGS.synonyms.changelog).not.toContain('更新日志');
    expect(MEILI_SETTINGS.stopWords).toContain('please');
    expect(MEILI_SETTINGS.searchableAttributes).toEqual(['name', 'description', 'headings', 'body']);
  });
});

describe('leadingWords', () => {
  // Pieces where NFKC or lowercasing could look across a cut: combining marks after a space, Hangul jamo,
  // a final sigma, full-width and compatibility letters, a ligature, digits, a word longer than a piece.
  const PIECES = [
    'word ',
    'Ünïcode ',
    'e\u0301 ',
    ' \u0301a ',
    '\u1100\u1161\u11a8 ',
    'ΟΔΟΣ ',
    'ΣΑΣ\n',
    'Ｆｕｌｌ ',
    'ﬁle ',
    '①② ',
    'x'.repeat(3_000),
    '\t',
    '\r\n',
    'snake_case-and.dots ',
    '日本語のテキスト ',
    '¨ ',
  ];

  it('cuts a long text where no piece changes its words, whatever sits at the cut', () => {
    // Each piece placed around where the first cut is looked for (2,048 characters in).
    for (const piece of PIECES) {
      for (let at = 2_040; at <= 2_052; at++) {
        const text = `${'ab '.repeat(700).slice(0, at)}${piece}${'cd ΟΣ '.repeat(400)}`;
        const all = textWords(text);
        expect(leadingWords(text, Number.POSITIVE_INFINITY)).toEqual(all);
        expect(leadingWords(text, 690)).toEqual(all.slice(0, 690));
      }
    }
  });

  it('gives the first words of textWords for texts long and short, at any limit', () => {
    let seed = 3;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let round = 0; round < 40; round++) {
      let text = '';
      const pieces = 1 + (next() % 2_000);
      for (let i = 0; i < pieces; i++) text += PIECES[next() % PIECES.length]!;
      const all = textWords(text);
      for (const limit of [0, 1, 7, 600, all.length, Number.POSITIVE_INFINITY]) {
        expect(leadingWords(text, limit)).toEqual(all.slice(0, limit));
      }
    }
  });
});

describe('words of languages written without spaces', () => {
  it('splits Chinese, Japanese and Thai into words, and from the Latin words glued to them', () => {
    expect(textWords('帮我规划这个项目，拆解任务并跟踪进度')).toEqual(
      expect.arrayContaining(['规划', '项目', '拆解', '任务', '跟踪', '进度']),
    );
    expect(textWords('把这个PDF转换成Word')).toEqual(['把', '这个', 'pdf', '转换', '成', 'word']);
    expect(textWords('このプロジェクトのタスクを分解して')).toEqual(
      expect.arrayContaining(['プロジェクト', 'タスク', '分解']),
    );
    expect(textWords('ไฟล์pdfนี้')).toEqual(['ไฟล์', 'pdf', 'นี้']);
  });

  it('keeps a run of katakana whole: the loanwords ICU does not know are not cut into letters', () => {
    expect(textWords('ベストプラクティスに沿ってリファクタリングして')).toEqual(
      expect.arrayContaining(['ベストプラクティス', 'リファクタリング']),
    );
    expect(textWords('データベース・サーバー')).toEqual(['データベース', 'サーバー']);
  });

  it('keeps a Korean word whole but parts a particle from the Latin word it follows', () => {
    expect(textWords('PDF를 Word로 변환해줘')).toEqual(['pdf', '를', 'word', '로', '변환해줘']);
  });

  it('keeps the vowel signs of a word on it', () => {
    expect(textWords('नमस्ते दुनिया')).toEqual(['नमस्ते', 'दुनिया']);
  });

  it('reads other text as runs of letters and digits, as before', () => {
    const text =
      'Build a PDF-to-Markdown converter (v2.3) for résumés, naïve café snake_case ✅ 🚀 Ελλάδα Tiếng Việt';
    expect(textWords(text)).toEqual(
      text
        .normalize('NFKC')
        .toLowerCase()
        .match(/[\p{L}\p{N}]+/gu),
    );
  });

  it('splits a stretch no one writes without punctuation in pieces, the same each time', () => {
    const stretch = '帮我把这个文件里的表格提取出来并且整理成报告然后发给团队成员审核'.repeat(20);
    const first = wordsAt(stretch);
    // Every character is in one word, in order, and a second reading (from what was remembered) agrees.
    expect(first.map((w) => w.word).join('')).toBe(stretch);
    for (const { word, index } of first) expect(stretch.slice(index, index + word.length)).toBe(word);
    expect(wordsAt(stretch)).toEqual(first);
    expect(textWords(stretch)).toEqual(first.map((w) => w.word));
  });

  it('reads traditional Chinese characters in simplified form, and simplified text as it is', () => {
    expect(textWords('幫我規劃這個專案，追蹤進度')).toEqual(textWords('帮我规划这个专案，追踪进度'));
    expect(textWords('帮我规划这个项目')).toEqual(['帮', '我', '规划', '这个', '项目']);
    // Character by character: mainland words are not read as Taiwan's (序列 "sequence" stays itself).
    expect(textWords('電子郵件序列')).toEqual(['电子邮件', '序列']);
    // A word as written (wordsAt) is read as textWords reads it.
    expect(wordsAt('把這個PDF轉換成Word').map((w) => readForm(w.word))).toEqual(
      textWords('把這個PDF轉換成Word'),
    );
    expect(readForm('Ｗｏｒｄ')).toBe('word');
  });

  it('says where each word starts, in the text as written', () => {
    const text = '请把 PDF转换成Word。';
    for (const { word, index } of wordsAt(text)) expect(text.slice(index, index + word.length)).toBe(word);
    expect(wordsAt(text).map((w) => w.word)).toEqual(['请', '把', 'PDF', '转换', '成', 'Word']);
  });
});

describe('Chinese and Japanese words of the field (translations.json)', () => {
  const alternativesOf = (text: string) => {
    const words = textWords(text);
    return findSynonyms(words).map((m): [string, string[]] => [
      words.slice(m.start, m.end).join(''),
      m.alternatives.map((a) => a.join(' ')),
    ]);
  };

  it('reads a Chinese or Japanese word of the field as its English too', () => {
    expect(alternativesOf('帮我写这次发布的更新日志')).toEqual(
      expect.arrayContaining([
        ['发布', ['release', 'publish']],
        ['更新日志', ['changelog']],
      ]),
    );
    // A word of the dictionary written in the other characters is the same word.
    expect(alternativesOf('更新日誌')).toEqual([['更新日志', ['changelog']]]);
    expect(alternativesOf('データベースを移行して')).toEqual([
      ['データベース', ['database']],
      ['移行', ['migrate']],
    ]);
  });

  it('reads a Korean word of the field through its stem, its particle or verb ending off', () => {
    expect(alternativesOf('최근 커밋으로 변경 로그를 작성해줘')).toEqual([
      ['커밋으로', ['commit']],
      ['변경로그를', ['changelog']],
      ['작성해줘', ['write']],
    ]);
    expect(koreanStems('데이터베이스에서')).toContain('데이터베이스');
    expect(koreanStems('database')).toEqual([]);
    // Only the dictionary is read through stems: the words the index holds stay as written.
    expect(textWords('로그를 분석해줘')).toEqual(['로그를', '분석해줘']);
  });

  it('reads a Russian word of the field by its stem, whatever its case or form', () => {
    expect(alternativesOf('перенеси базу данных и обнови журнал изменений')).toEqual(
      expect.arrayContaining([
        ['перенеси', ['migrate']],
        ['базуданных', ['database']],
        ['обнови', ['update']],
        ['журнализменений', ['changelog']],
      ]),
    );
    expect(translationsOf('индексы')).toEqual([['index']]);
    expect(translationsOf('базы')).toEqual([]);
  });

  it("reads a Russian past participle as its verb's word", () => {
    // -ить verbs: the participle's stem is the verb's and "ен", an "л" after a labial.
    expect(translationsOf('смерженным')).toEqual([['merge']]);
    expect(translationsOf('задеплоенный')).toEqual([['deploy']]);
    expect(translationsOf('удалённых')).toEqual([['delete']]);
    expect(translationsOf('добавленные')).toEqual([['add']]);
    // The same in a search query: every lookup of the dictionary reads participles.
    expect(alternativesOf('смерженные ветки')).toEqual([
      ['смерженные', ['merge']],
      ['ветки', ['branch']],
    ]);
    // A word that is no participle, or whose base is no verb of the dictionary, stays unread.
    expect(translationsOf('время')).toEqual([]);
    expect(translationsOf('стен')).toEqual([]);
  });

  it('one way: an English query is read as before', () => {
    const read = alternativesOf('write the changelog for this release and migrate the database');
    expect(read.length).toBeGreaterThan(0);
    for (const [, alternatives] of read) for (const a of alternatives) expect(a).toMatch(/^[a-z0-9 ]+$/);
  });

  it('joins the words of a phrase ICU splits before lone characters are left out', () => {
    expect(textWords('服务器')).toEqual(['服务', '器']);
    expect(joinTranslatedPhrases(textWords('给服务器加上监控'))).toEqual(['给', '服务器', '加上', '监控']);
    expect(joinTranslatedPhrases(['deploy', 'the', 'server'])).toEqual(['deploy', 'the', 'server']);
  });
});
