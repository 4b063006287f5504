import { SUGGEST_MAX_MESSAGE } from '@atskills/protocol';
import { joinTranslatedPhrases, STOP_WORDS, textWords } from '../search/relevance/analyze.js';
import { intoEnglish } from './foreign-terms.js';
import { foreignFunctionWords } from './language.js';
import {
  joinTracked,
  replaceTracked,
  sliceTracked,
  splitTracked,
  type TrackedText,
  tracked,
} from './tracked-text.js';

/** One need of a message: the clause that states it and its content words. */
export interface Need {
  /** The clause as need finding reads it (trimmed; code, paths and file extensions set aside). */
  text: string;
  /**
   * For each character of `text`, its index in the message: the part of the message a suggestion answers is
   * quoted from the message itself.
   */
  at: Int32Array;
  /** Its content words (lowercase, stop words and filler left out), in order. */
  words: string[];
}

/** What a message asks for: the whole request and, when it names several, each need apart. */
export interface MessageNeeds {
  /** The user's own words of the message (`userText`): what `taskSignal` reads. */
  text: string;
  /** Content words of the whole request (every clause), in order, without repeats. */
  words: string[];
  /** The request as one clause (`text` is the cleaned message). */
  whole: Need;
  /** The needs when the message names more than one (distinct clauses); empty for a single need. */
  parts: Need[];
  /**
   * The words of a message in Spanish, Portuguese, French, Italian or German read as English
   * (foreign-terms.ts), and their English: a quote is made of the message's own words.
   */
  readAs: ReadonlyMap<string, readonly string[]>;
}

/**
 * Content words kept for the whole request: a bound on a request's cost, not a guess at where the ask is.
 * At 24 the ask of 81 of the 207 judged answerable messages was cut off (it often comes last, after the
 * context: "... so I can stop answering the same five questions"); at 40, held-out recall@5 rose from 0.824
 * to 0.832 and success@1 from 0.802 to 0.820 (mean over 8 shuffled fold assignments); 60 changed nothing more.
 */
const MAX_WORDS = 40;
/**
 * Fewest content words for a clause to stand as a need of its own, and most needs searched apart. A clause
 * of two content words ("It's 300 alerts a day") is context more often than a need, and each need adds a
 * lexical, term-model and LSA list to the fusion: with 3 and 3 (2 and 4 before, words at 40) held-out
 * recall@5 rose from 0.832 to 0.841 (2 and 3: 0.837; 3 and 4: 0.837; 4 and 3: 0.841; 2 and 2: 0.828).
 */
export const MIN_PART_WORDS = 3;
const MAX_PARTS = 3;

// Words that carry no need in a message to an agent (beyond the search stop words): politeness, hedges,
// and the verbs every request uses. Kept here, not in the search stop words: a query "help" is a search.
const FILLER = new Set(
  (
    'hi hey hello hiya yo thanks thank thx ty cheers please pls plz ok okay sure great cool nice awesome ' +
    'perfect lovely good morning afternoon evening appreciate appreciated kindly actually basically just ' +
    'really maybe perhaps probably somehow anyway also too still again now then there here something ' +
    'anything everything someone somebody stuff thing things way bit lot lots quick quickly real really ' +
    'help helps helping want wants wanted need needs needed like would could should can cant might must ' +
    "let lets let's try trying tried get got getting make makes making do does doing did done go going " +
    'know think guess wonder wondering see look looking able assist hoping hope mind tell me my mine i im ' +
    "you your we our us it its it's this that these those what which who whom how why when where whether " +
    'is are was were be been being am have has had will shall wo won dont don doesn didn isn aren wasn ' +
    'worked works working fine sounds sound lol haha yes yeah yep no nope right alright awesome wow ' +
    'bye later soon today tomorrow yesterday ' +
    // The same for requests in Chinese, Japanese and Korean, as ICU splits them into words (analyze.ts).
    '帮 帮忙 请 麻烦 需要 想 想要 可以 能 能不能 一下 一些 怎么 如何 什么 为什么 谢谢 多谢 好的 然后 还有 另外 ' +
    '顺便 接着 之后 再 现在 今天 明天 出来 起来 下来 お願い ください して しま てる たい 下さい 教え 手伝っ それから あと ' +
    'ついでに 今日 明日 좀 주세요 해줘 해 주세요 부탁 그리고 또'
  ).split(/\s+/),
);

/**
 * A Japanese word written in hiragana alone: a particle, an auxiliary or an inflection's ending ("くだ" and
 * "さい" of ください, as ICU splits it), where what a request names is written in kanji or katakana.
 */
const HIRAGANA_ONLY = /^\p{Script=Hiragana}+$/u;

/** Whether a word carries no need (stop word, filler, a lone digit or letter, hiragana alone). */
export function isFiller(word: string): boolean {
  return (
    STOP_WORDS.has(word) ||
    FILLER.has(word) ||
    word.length < 2 ||
    /^\d+$/.test(word) ||
    HIRAGANA_ONLY.test(word)
  );
}

// Every pattern here reads up to 8,000 characters a stranger sent, so each runs in linear time
// (test/architecture/regex-safety.test.ts checks them all): a lookbehind such as (?<!\s) lets a match start
// only at the start of a run, where one that may start anywhere retried the whole run from each of its
// characters (two quantifiers over the same run did so at every split: 8,000 characters took 17 s).
// Lines that are not the user's words: quoted mail, stack frames, log lines, shell prompts.
const QUOTED = /^\s*>/;
const QUOTE_MARKS = /^[\s>]+/g;
const STACK_FRAME =
  /^\s*(at\s+\S.*[(:]\d+|File ".*", line \d+|Traceback \(most recent call last\)|\w+(\.\w+)*(Error|Exception)(:|$)|#\d+\s+0x[0-9a-f]+|\.\.\. \d+ more|Caused by:)/i;
const LOG_LINE =
  /^\s*(\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[?(DEBUG|INFO|WARN|WARNING|ERROR|TRACE|FATAL)\]?\b|[$#] \S)/;
// Paths, URLs, file names, hashes and code-looking tokens inside prose.
const URL = /(?<![\w+.-])[a-z][a-z0-9+.-]*:\/\/\S+/gi;
// `@skills:` references (as the protocol's scanReferences finds them: not inside a word or an address): the
// skills they name are injected already, and their identities are no words of the need (twenty missing
// references before a request took its best score from 0.61 to 0.11).
const REFERENCE = /(?<![\p{L}\p{N}_.+\-@])@skills:\S+/gu;
const PATH = /(^|\s)(~|\.{1,2})?([\\/][\w.@-]+){2,}[\\/]?|[A-Za-z]:\\\S+/g;
const FILE_NAME =
  /(?<![\w-])-*\b[\w-]+\.(ts|tsx|js|jsx|mjs|cjs|py|rb|go|rs|java|kt|c|h|cpp|hpp|cs|json|ya?ml|toml|lock|md|txt|log|sh|sql|css|html|xml|env|cfg|ini)\b/gi;
const HEX = /\b[0-9a-f]{7,}\b/gi;
const INLINE_CODE = /`[^`\n]{1,200}`/g;

/** The user's own words of a message: code blocks, quoted mail, stack traces, log lines and paths removed. */
export function userText(message: string): string {
  return trackedUserText(message).text;
}

/**
 * The message's first SUGGEST_MAX_MESSAGE code points, as the schema counts them: a slice by UTF-16 units
 * read an emoji-heavy message the schema accepts only to its middle.
 */
function readablePart(message: string): string {
  // A code point is one or two units: a message that fits in units fits, and most messages are short.
  if (message.length <= SUGGEST_MAX_MESSAGE) return message;
  return [...message].slice(0, SUGGEST_MAX_MESSAGE).join('');
}

/**
 * `userText`, each character knowing where in the message it came from. With `quotedToo`, quoted lines
 * (their `>` marks dropped), stack frames and log lines are kept: the text a need is read from when the
 * user's own words name none ("can you do this for me?" under a quoted request, "fix it" under a log).
 */
function trackedUserText(message: string, quotedToo = false): TrackedText {
  let t = replaceTracked(tracked(readablePart(message)), /\r\n?/g, () => '\n');
  // Fenced code blocks (an unclosed fence runs to the end: it is code the user pasted).
  t = replaceTracked(t, /(^|\n)[^\S\n]*(```|~~~)[^\n]*\n[\s\S]*?(\n[^\S\n]*\2[^\n]*(?=\n|$)|$)/g, () => '\n');
  const kept: TrackedText[] = [];
  for (let piece of splitTracked(t, /\n/g)) {
    if (QUOTED.test(piece.text)) {
      if (!quotedToo) continue;
      piece = replaceTracked(piece, QUOTE_MARKS, (marks) => ' '.repeat(marks.length));
    } else if (!quotedToo && (STACK_FRAME.test(piece.text) || LOG_LINE.test(piece.text))) continue;
    const line = piece.text;
    // Indented code (four spaces or a tab) and lines that are mostly symbols (code, tables of numbers).
    if (/^( {4}|\t)\S/.test(line) && !/(?<![a-z])[a-z]{3,}\s+[a-z]{3,}\s+[a-z]{3,}/i.test(line)) continue;
    const letters = (line.match(/\p{L}/gu) ?? []).length;
    if (line.trim().length > 12 && letters / line.trim().length < 0.5) continue;
    kept.push(piece);
  }
  t = joinTracked(kept, '\n');
  t = replaceTracked(t, INLINE_CODE, (code) => (/^`[\w -]{1,40}`$/.test(code) ? code.slice(1, -1) : ' '));
  t = replaceTracked(t, REFERENCE, () => ' ');
  t = replaceTracked(t, URL, () => ' ');
  t = replaceTracked(t, PATH, () => ' ');
  t = replaceTracked(t, FILE_NAME, (name) => name.replace(/\.\w+$/, ''));
  return replaceTracked(t, HEX, () => ' ');
}

/** Whether a word of a message may carry its need (no filler, no run of 40 letters). */
const isContent = (word: string) => !isFiller(word) && word.length <= 40;

/** Content words of a piece of text. */
export function contentWords(text: string): string[] {
  return textWords(text).filter(isContent);
}

// Where one need ends and another begins: sentence ends, and joiners that start a new request. Chinese and
// Japanese end a sentence with full-width punctuation and no space after it, and join requests with a
// comma and "then", "also", "besides" (然后, 还有, 另外, 顺便, 接着, それから, あと, ついでに).
const SENTENCE_END = /(?<=[.!?;])\s+|(?<=[。！？；])\s*|\n+/g;
const NEW_REQUEST =
  /(?<!\s)(?:\s*,\s+|\s+)(?:and\s+also|and\s+then|also|plus|as\s+well\s+as|after\s+that|then|and\s+(?=(?:can|could|would|please|help|write|make|create|add|set|build|generate|draft|review|fix|check|update|convert|deploy|summari[sz]e|analy[sz]e|design|plan|test|find|run|pull|get)\b))\s+|[，、,]\s*(?=然后|还有|另外|顺便|接着|之后|再帮|それから|あと|ついでに|그리고|또)/gi;

/**
 * Finds what a message asks for: its content words, and its separate needs when it names several. The
 * user's own words come first; when they name too little to stand alone (SPEC 2.7: the need may sit in
 * quoted text or a log), the quoted text and the logs are read with them.
 */
export function extractNeeds(message: string): MessageNeeds {
  const own = needsOf(trackedUserText(message));
  if (own.words.length >= MIN_PART_WORDS) return own;
  const withQuoted = needsOf(trackedUserText(message, true));
  return withQuoted.words.length > own.words.length ? withQuoted : own;
}

function needsOf(text: TrackedText): MessageNeeds {
  const pieces: { clause: TrackedText; words: string[] }[] = [];
  for (const sentence of splitTracked(text, SENTENCE_END)) {
    for (const clause of splitTracked(sentence, NEW_REQUEST))
      pieces.push({ clause, words: joinTranslatedPhrases(textWords(clause.text)) });
  }
  // A message in another language: its function words are no need either (language.ts), and its words of
  // the field are read as their English (foreign-terms.ts).
  const { functionWords, languages } = foreignFunctionWords(pieces.flatMap((p) => p.words));
  const clauses: Need[] = [];
  const readAs = new Map<string, readonly string[]>();
  for (const piece of pieces) {
    const english = languages.length > 0 ? intoEnglish(piece.words, languages, functionWords) : null;
    if (english) for (const [word, as] of english.readAs) readAs.set(word, as);
    const words = (english?.words ?? piece.words).filter((w) => isContent(w) && !functionWords.has(w));
    if (words.length > 0) clauses.push({ ...trimClause(piece.clause), words });
  }
  const words = [...new Set(clauses.flatMap((c) => c.words))].slice(0, MAX_WORDS);
  const whole: Need = { ...joinTracked(clauses, ' '), words };
  // Clauses too short to stand alone join the one before (a "fix it" belongs to what it follows).
  const merged: Need[] = [];
  for (const c of clauses) {
    const prev = merged[merged.length - 1];
    if (prev && c.words.length < MIN_PART_WORDS) {
      const joined = joinTracked([prev, c], ' ');
      prev.text = joined.text;
      prev.at = joined.at;
      prev.words.push(...c.words);
    } else merged.push({ text: c.text, at: c.at, words: [...c.words] });
  }
  const parts = merged.length > 1 ? merged.slice(0, MAX_PARTS) : [];
  return { text: text.text, words, whole, parts, readAs };
}

/** A clause without the white space and the separating punctuation around it. */
function trimClause(clause: TrackedText): TrackedText {
  const text = clause.text;
  const start = text.length - text.trimStart().length;
  const end = text.trimEnd().length;
  const trimmed = text.slice(start, end);
  const lead = /^[,;:\-\s]+/.exec(trimmed)?.[0].length ?? 0;
  const trail = /(?<![,;:\s])[,;:\s]+$/.exec(trimmed.slice(lead))?.[0].length ?? 0;
  return sliceTracked(clause, start + lead, end - trail);
}

/** Whether a message holds a task for a skill, read from its wording alone (before any skill is scored). */
export interface TaskSignal {
  /** The message asks for something: an imperative, "can you ...", "I need ...", "how do I ...". */
  request: boolean;
  /** Every clause is small talk: greetings, thanks, farewells, chit-chat, questions about the assistant. */
  smallTalk: boolean;
}

// Clauses that are small talk whatever else they say: a user expects no skill for them.
const SMALL_TALK = [
  /^(hi|hey|hello|hiya|yo|morning|good (morning|afternoon|evening|night)|evening|night)\b/i,
  /\b(thanks?|thank you|thx|ty|cheers|appreciate(d)? it|much appreciated)\b/i,
  /\b(bye|goodbye|see you|see ya|talk (tomorrow|later|soon)|catch you later|have a (great|good|nice) (day|weekend|evening|one)|call it a day)\b/i,
  /\bhow('?s| is| are)( it going| you| things| your day| everything)\b/i,
  /\b(do|did|can|are|have|would) you (ever|like|feel|enjoy|remember|get tired|have feelings|dream|think you)\b/i,
  /\b(never ?mind|ignore (me|that|this)|all good( now)?|no worries|no rush|carry on|nvm)\b/i,
  /\b(tell me a joke|a joke about|make me laugh|lol|haha|lmao|hilarious)\b/i,
  /\b(heading out|back in (an|a|\d+)|out (of office|thursday|friday|monday|tomorrow)|heads up|lunch|coffee|tired today|weekend)\b/i,
  /^(ok(ay)?|sure|yes|yeah|yep|no|nope|nah|great|cool|nice|perfect|awesome|got it|sounds good|go ahead|done|right)\b[\s,.!👍🙂😄]*(go ahead|thanks?|that('?s| is) (it|exactly|what)|works?|worked)?/iu,
  // Greetings, thanks and farewells in Chinese, Japanese and Korean (no \b: those scripts have no word
  // boundary to mark).
  /^(你好|您好|嗨|早上好|晚上好|こんにちは|こんばんは|おはよう|안녕)|(谢谢|多谢|感谢|辛苦了|再见|拜拜|明天见|ありがとう|お疲れ|さようなら|また明日|감사합니다|고마워|고맙습니다|수고)/u,
];

// Words that open a request, and request frames anywhere in a clause.
const IMPERATIVE =
  /^(please\s+)?(write|make|create|add|set ?up|build|generate|draft|review|fix|check|update|convert|deploy|summari[sz]e|analy[sz]e|design|plan|test|find|run|pull|get|show|explain|refactor|debug|migrate|optimi[sz]e|document|audit|scan|extract|parse|scrape|automate|monitor|implement|port|translate|rename|sort|compute|calculate|turn|produce|prepare|investigate|profile|benchmark|benchmark|triage|clean|format|lint|package|publish|release|upgrade|install|configure|integrate|deploy|split|merge|compare|visuali[sz]e|chart|plot|model|train|evaluate|measure|track|tune|help|do|break|adapt|instrument|fill|set|wire|hook|connect|send|post|schedule|draft|outline|brainstorm|estimate|forecast|predict|identify|detect|classify|label|annotate|transcribe|record|edit|resize|crop|compress|encrypt|secure|harden|fetch|download|upload|sync|backup|restore|import|export|load|query|search|look|go|walk|give|tell|list|recommend|suggest|propose|rewrite|polish|proofread|localize|write|dig|first|two|three)\b/i;
const REQUEST_FRAME =
  /\b(can|could|would|will) (you|u|we|someone)\b|\b(i|we) (need|want|would like|'d like|have to|must|should|am trying|'m trying|are trying|'re trying)\b|\bhelp (me|us)\b|\bhow (do|can|should|would) (i|we|you)\b|\b(is there a way|what'?s the best way|let'?s)\b|\bplease\b|\b(keeps?|is|are|started) (failing|failing on|broken|crashing|timing out|throwing|slow)\b|\b(fails?|failing|broke|broken|crash(es|ing)?|errors? out)\b|\b(i|we)'?d (like|love)\b|\b(which|what) .{0,60}\b(should|can|could|do|did) (i|we|she|he|they)\b|\bis there a (skill|tool|way)\b|\b(doesn'?t|don'?t|won'?t|can'?t|isn'?t|aren'?t) (work|load|render|show|respond|connect|build|compile|start|scale)|\b(not working|too slow|stutters?|ignores?|hangs?|leaks?|flaky|keeps?)\b|\b(i'?m|we'?re) (not sure|not convinced|worried|stuck)\b|\b(i|we) (can'?t|cannot|couldn'?t) (figure|work|find|get|tell|decide)\b|\bshould\b.{0,60}\b(better|faster|cleaner|clearer|stronger|shorter|simpler)\b/i;

/**
 * Reads whether a message holds a task for a skill from its wording (the need's own clauses). `text` is the
 * message's `userText`, passed when the caller has it (`extractNeeds` made it) rather than made again.
 */
export function taskSignal(message: string, text = userText(message)): TaskSignal {
  const clauses = text
    .split(SENTENCE_END)
    .flatMap((s) => s.split(/(?<!\s)(?:\s*,\s+|\s+(?:and|but|so)\s+)/i))
    .map((c) => c.trim())
    .filter((c) => /\p{L}/u.test(c));
  let request = false;
  let talk = 0;
  for (const clause of clauses) {
    if (IMPERATIVE.test(clause) || REQUEST_FRAME.test(clause)) request = true;
    if (SMALL_TALK.some((re) => re.test(clause)) || contentWords(clause).length === 0) talk++;
  }
  // Small talk: every clause is, or the message asks for nothing and most of it is small talk (a long
  // thank-you or heads-up carries content words that are no task).
  return {
    request,
    smallTalk: talk === clauses.length || (!request && talk * 2 >= clauses.length),
  };
}
