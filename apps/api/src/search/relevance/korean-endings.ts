/**
 * The endings a Korean word carries after the noun a dictionary lists: particles (데이터베이스에서 "in the
 * database", 로그를) and the 하다 / 되다 verb endings written onto Sino-Korean nouns (분석해줘 "analyse it,
 * please", 배포된 "deployed"). Korean is written with spaces, but each space-separated word holds its
 * particles and endings, so a request's 로그를 never met the dictionary's 로그.
 *
 * Written here rather than taken from a library: the Korean analyzers (mecab-ko, Lucene's Nori) need a
 * dictionary download, and this list is used only to look a word up in translations.json, never to
 * change the words the index holds: a wrong cut can only miss (the stem must be a dictionary word).
 */
/** The 하다 / 되다 endings written onto a noun, then the particles; tried longest first. */
const ENDINGS = (
  '해주세요 해줄래요 해주시겠어요 해줄래 해줘요 해주고 해주면 해드려 해줘 하려고 하려면 했는데 했어요 합니다 하세요 했어 했다 해서 해야 하고 하는 하기 하면 ' +
  '하게 하지 해요 하자 할 한 해 됐는데 됩니다 됐어 되는 되게 되지 돼요 된 돼 시켜줘 시켜 적으로 적인 ' +
  '에서는 에서도 에게서 으로는 으로써 으로서 에서 에게 한테 으로 까지 부터 처럼 보다 이랑 이나 에는 에도 과는 와는 이고 이며 입니다 이야 을 를 은 는 이 ' +
  '가 의 에 로 와 과 도 만 랑'
)
  .split(' ')
  .sort((a, b) => b.length - a.length);

const ENDS_IN_HANGUL = /\p{Script=Hangul}$/u;

/** The stems a Korean word may have under its endings, longest ending first (none for other words). */
export function koreanStems(word: string): string[] {
  if (!ENDS_IN_HANGUL.test(word)) return [];
  const stems: string[] = [];
  for (const ending of ENDINGS) {
    if (word.length > ending.length && word.endsWith(ending)) stems.push(word.slice(0, -ending.length));
  }
  return stems;
}
