import { describe, expect, it } from 'vitest';
import { MAX_QUOTED_WORDS, phraseQuoter } from './matched.js';
import { extractNeeds } from './needs.js';
import { tracked } from './tracked-text.js';

/** A text quoted as a message of its own (each character from where it is). */
const sourceOf = (text: string) => ({ message: text, at: tracked(text).at });
const quotedPhrase = (text: string, weightOf: (word: string) => number) =>
  phraseQuoter(text, sourceOf(text))(weightOf).phrase;

/** A skill holding these words, each weighing 1 unless given. */
const holding =
  (words: Record<string, number> | string[]) =>
  (word: string): number =>
    Array.isArray(words) ? (words.includes(word) ? 1 : 0) : (words[word] ?? 0);

describe('phraseQuoter', () => {
  it('quotes the densest phrase, not the stretch from the first held word to the last', () => {
    const text =
      'Our webhook handler has been flaky since Monday. The signature check compares the computed HMAC ' +
      'with the header and bails out at the first differing byte, and the security review flagged it; ' +
      'also the handler logs too much.';
    const phrase = quotedPhrase(text, holding(['signature', 'compares', 'hmac', 'byte', 'handler', 'logs']));
    // "byte" is 13 words after "compares": the first three held words are the heaviest phrase.
    expect(phrase).toBe('signature check compares the computed HMAC');
    expect(phrase.split(' ').length).toBeLessThanOrEqual(MAX_QUOTED_WORDS);
  });

  it('weighs words: a rare word the skill is about outweighs two common ones', () => {
    const text =
      'review the code and the tests of the module we wrote last week, then the changelog for the release';
    expect(quotedPhrase(text, holding({ code: 0.2, tests: 0.2, changelog: 3, release: 1 }))).toBe(
      'changelog for the release',
    );
  });

  it('stays inside one sentence', () => {
    const text = 'Write the release notes. Then deploy to staging; notify the channel';
    expect(quotedPhrase(text, holding(['notes', 'deploy', 'staging']))).toBe('deploy to staging');
    expect(quotedPhrase('Use Node.js for it', holding(['node', 'js']))).toBe('Node.js');
    // A full stop inside a word is not the end of a sentence.
    expect(quotedPhrase('deploy Node.js apps', holding(['deploy', 'apps']))).toBe('deploy Node.js apps');
    expect(quotedPhrase('is it done? yes. deploy it', holding(['done', 'deploy']))).toBe('done');
  });

  it('prefers the shorter phrase of equal weight, then the earlier', () => {
    expect(quotedPhrase('lint fails, the lint step in CI fails', holding(['lint', 'fails']))).toBe(
      'lint fails',
    );
  });

  it('never starts at the end of a contraction, and ends a contraction whole', () => {
    // "we're" and "couldn't" leave "re" and "couldn" once the apostrophe splits them.
    const held = holding(['re', 'ci', 'lint', 'couldn']);
    expect(quotedPhrase("we're red on CI because lint says we couldn't", held)).toBe(
      "CI because lint says we couldn't",
    );
    // A word in single quotes is a word of the message.
    expect(quotedPhrase("the 'CI' is red on lint", holding(['ci', 'lint']))).toBe("CI' is red on lint");
    expect(quotedPhrase('we\u2019re red on CI', held)).toBe('CI');
  });

  it('quotes a file name or a version whole, and no bracket it does not close', () => {
    expect(
      quotedPhrase('review their MSA (msa-2025.docx): flag liability caps', holding(['docx', 'liability'])),
    ).toBe('msa-2025.docx: flag liability');
    expect(quotedPhrase('a CSV (date, store_id, units, revenue and more)', holding(['csv', 'units']))).toBe(
      'CSV date, store_id, units',
    );
    expect(quotedPhrase('bump to v2.4.0 and tag it', holding(['bump', 'v2']))).toBe('bump to v2.4.0');
  });

  it('quotes a text once split for each skill it is given', () => {
    const text = 'the CI lint step fails. Then write the release notes';
    const quote = phraseQuoter(text, sourceOf(text));
    expect(quote(holding(['lint', 'fails']))).toEqual({ phrase: 'lint step fails', weight: 2 });
    expect(quote(holding({ release: 2, notes: 0.5 }))).toEqual({ phrase: 'release notes', weight: 2.5 });
    expect(quote(holding(['lint']))).toEqual({ phrase: 'lint', weight: 1 });
    // A skill holding none of its words: the opening words, weighing nothing.
    expect(quote(holding([]))).toEqual({ phrase: 'the CI lint step fails', weight: 0 });
  });

  it('folds line breaks and gaps, and quotes the opening words when the skill holds none', () => {
    expect(quotedPhrase('deploy  the \t worker', holding(['deploy', 'worker']))).toBe('deploy the worker');
    expect(quotedPhrase('deploy\nthe worker', holding(['deploy', 'worker']))).toBe('deploy');
    const words = Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ');
    expect(quotedPhrase(`${words}. More`, holding([]))).toBe(
      words.split(' ').slice(0, MAX_QUOTED_WORDS).join(' '),
    );
    expect(quotedPhrase('  ', holding([]))).toBe('');
  });

  it("quotes the message itself, in the user's characters, when it knows where the text came from", () => {
    const fromMessage = (message: string, held: string[]) => {
      const { whole } = extractNeeds(message);
      return phraseQuoter(whole.text, { message, at: whole.at })(holding(held)).phrase;
    };
    // Need finding reads "CLAUDE" (the extension set aside); the quote is the user's "CLAUDE.md".
    expect(fromMessage('Our CLAUDE.md is a mess, please audit it', ['claude', 'mess', 'audit'])).toBe(
      'CLAUDE.md is a mess, please audit',
    );
    // A code block between two clauses ends the sentence: the quote does not run across it.
    const pasted = 'review this view please, it is slow:\n```py\nx = view()\n```\nThe page takes 4s';
    expect(fromMessage(pasted, ['view', 'page'])).toBe('view');
    // Inline code comes back as plain text.
    expect(fromMessage('never run `git push --force` on main', ['git', 'push', 'force', 'main'])).toBe(
      'git push --force on main',
    );
    // A URL need finding set aside comes back, unless it would be most of the quote.
    expect(fromMessage('deploy https://example.com/x to staging', ['deploy', 'staging'])).toBe(
      'deploy https://example.com/x to staging',
    );
    const long = `deploy https://example.com/${'a'.repeat(300)} to staging`;
    expect(fromMessage(long, ['deploy', 'staging'])).toBe('deploy to staging');
  });

  it('quotes the words of a Chinese request, not the whole run of letters around them', () => {
    const message = '先帮我把这个PDF转换成Word。然后检查一下格式';
    const { whole } = extractNeeds(message);
    const quote = phraseQuoter(whole.text, { message, at: whole.at });
    expect(quote(holding(['pdf', 'word'])).phrase).toBe('PDF转换成Word');
    // The sentence ends at 。 with no space after it: the quote does not run across it.
    expect(quote(holding(['word', '检查', '格式'])).phrase).toBe('检查一下格式');
  });
});
