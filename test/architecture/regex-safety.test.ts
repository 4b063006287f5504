/**
 * Every regular expression the hub, the crawler, the CLI and the packages ship runs in linear time:
 * recheck (a ReDoS checker: static analysis of the pattern's automaton, then fuzzing) finds no input on
 * which one backtracks polynomially or exponentially. What these patterns read is written by strangers: a
 * message sent to /v1/suggest, a SKILL.md crawled from any public repository, an identity in a URL. Before
 * this check, an 8,000-character suggestion message of two long runs held the event loop for 17 s and one
 * 256 KiB line of a skill file held the safety scan for 130 s (docs/security.md, "Patterns that run in
 * linear time"). Regex literals are checked, and `new RegExp(...)` built from constants of its own file
 * (String.raw templates, string and number literals); a RegExp built from anything else fails the test,
 * as it cannot be checked.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { check } from 'recheck';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parse, ROOT, sourceFiles } from './source-files.js';

interface FoundPattern {
  where: string;
  source: string;
  flags: string;
}

/**
 * Patterns recheck calls polynomial only through a bounded window (`[^|\n]{0,300}`): at most that many
 * steps a start, so linear in the line with that constant (measured: four times the attack recheck gives
 * takes three to five times as long). Named by file and a part of the source that holds the window.
 */
const BOUNDED: { file: string; part: string; why: string }[] = [
  {
    file: 'packages/protocol/src/node/git.ts',
    part: "repository '?.*'? not found",
    why: "reads git's own stderr (a few short lines git writes about a URL the crawler built), not text a user sends",
  },
  ...[
    [
      'packages/protocol/src/safety/encoded-payload.ts',
      String.raw`\bbase64\s+(?:-d|--decode|-D)\b[^|\n]{0,300}`,
    ],
    [
      'packages/protocol/src/safety/encoded-payload.ts',
      String.raw`\b(?:iex|invoke-expression)\b[^\n]{0,300}`,
    ],
    [
      'packages/protocol/src/safety/encoded-payload.ts',
      String.raw`\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]{0,300}`,
    ],
    [
      'packages/protocol/src/safety/remote-exec.ts',
      String.raw`\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|\n]{0,300}`,
    ],
    [
      'packages/protocol/src/safety/remote-exec.ts',
      String.raw`\.downloadstring\s*\([^)]{0,300}\)[^\n]{0,300}`,
    ],
    [
      'packages/protocol/src/safety/exfiltration.ts',
      String.raw`)[^|\n]{0,300}\|\s*(?:[\w-]+\s+[^|\n]{0,300}\|\s*)?`,
    ],
    ['packages/protocol/src/safety/exfiltration.ts', String.raw`\s*(?:\|\s*[\w-]+[^|\n]{0,300})?\|`],
    ['packages/protocol/src/safety/exfiltration.ts', String.raw`[^\n]{0,300}(?:-d|--data`],
    ['packages/protocol/src/safety/exfiltration.ts', String.raw`[^\n]{0,300}(?:\$\(|\x60)\s*(?:(?:cat`],
    ['packages/protocol/src/safety/exfiltration.ts', String.raw`\bscp\s+(?:-\S+\s+){0,10}`],
    ['packages/protocol/src/safety/remote-exec.ts', String.raw`(?:sudo\s+(?:-\S+\s+){0,10})?`],
  ].map(([file, part]) => ({
    file: file!,
    part: part!,
    why: 'a window of at most 300 characters (or 10 options) after each command word: bounded steps a start',
  })),
];

/** The value of a constant expression of `file` (undefined when it is not one). */
function constantValue(
  node: ts.Expression,
  consts: Map<string, ts.Expression>,
  depth = 0,
): string | undefined {
  if (depth > 20) return undefined;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isNumericLiteral(node))
    return node.text;
  if (ts.isParenthesizedExpression(node)) return constantValue(node.expression, consts, depth + 1);
  if (ts.isIdentifier(node)) {
    const bound = consts.get(node.text);
    return bound ? constantValue(bound, consts, depth + 1) : undefined;
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = constantValue(node.left, consts, depth + 1);
    const right = constantValue(node.right, consts, depth + 1);
    return left === undefined || right === undefined ? undefined : left + right;
  }
  const raw =
    ts.isTaggedTemplateExpression(node) && node.tag.getText() === 'String.raw' ? node.template : undefined;
  const template = raw ?? (ts.isTemplateExpression(node) ? node : undefined);
  if (!template) return undefined;
  // A raw template's text is its source between the backticks; a plain one's, the cooked text.
  const text = (part: ts.TemplateLiteralLikeNode) => (raw ? (part.rawText ?? part.text) : part.text);
  if (ts.isNoSubstitutionTemplateLiteral(template)) return text(template);
  let out = text(template.head);
  for (const span of template.templateSpans) {
    const value = constantValue(span.expression, consts, depth + 1);
    if (value === undefined) return undefined;
    out += value + text(span.literal);
  }
  return out;
}

/** Every pattern of one file, and the `new RegExp` calls that could not be folded to constants. */
function patternsOf(file: string): { found: FoundPattern[]; unchecked: string[] } {
  const source = parse(file);
  const consts = new Map<string, ts.Expression>();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    if (!(statement.declarationList.flags & ts.NodeFlags.Const)) continue;
    for (const d of statement.declarationList.declarations)
      if (ts.isIdentifier(d.name) && d.initializer) consts.set(d.name.text, d.initializer);
  }
  const found: FoundPattern[] = [];
  const unchecked: string[] = [];
  const at = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node) => {
    if (ts.isRegularExpressionLiteral(node)) {
      const end = node.text.lastIndexOf('/');
      found.push({ where: at(node), source: node.text.slice(1, end), flags: node.text.slice(end + 1) });
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      const [pattern, flags] = node.arguments ?? [];
      const value = pattern ? constantValue(pattern, consts) : undefined;
      const flagValue = flags ? constantValue(flags, consts) : '';
      if (value === undefined || flagValue === undefined) unchecked.push(at(node));
      else found.push({ where: at(node), source: value, flags: flagValue });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { found, unchecked };
}

/**
 * Patterns recheck found safe, by a hash of their flags and source. recheck's fuzzing has time limits, so a
 * verdict can change with how busy the machine is (and without them a check can run for many minutes):
 * the verdicts are taken once, on a quiet machine, and CI checks only the patterns that are new or
 * changed. `REGEX_VERDICTS=write npx vitest run test/architecture/regex-safety.test.ts` checks every
 * pattern again and rewrites the file.
 */
const VERDICTS_FILE = path.join(ROOT, 'test/architecture/regex-verdicts.json');
const rewrite = process.env.REGEX_VERDICTS === 'write';

/** The key of a pattern in the verdicts file. */
const keyOf = (p: { source: string; flags: string }) =>
  createHash('sha256')
    .update(`${p.flags.replace(/[gy]/g, '')}/${p.source}`)
    .digest('hex')
    .slice(0, 20);

const files = ['apps', 'packages'].flatMap((dir) => sourceFiles(dir));
const all = files.map(patternsOf);

describe('regular expressions', () => {
  it('are all built from constants, so that each can be checked', () => {
    expect(all.flatMap((f) => f.unchecked)).toEqual([]);
  });

  it('run in linear time on every input (recheck)', { timeout: 900_000 }, async () => {
    const patterns = all.flatMap((f) => f.found);
    // Hundreds of patterns in the source; a check fails loudly rather than passing on an empty tree.
    expect(patterns.length).toBeGreaterThan(300);
    const known = new Set<string>(rewrite ? [] : JSON.parse(readFileSync(VERDICTS_FILE, 'utf8')).safe);
    const safe = new Set<string>();
    const unsafe: string[] = [];
    for (const p of patterns) {
      const file = p.where.slice(0, p.where.lastIndexOf(':'));
      if (BOUNDED.some((b) => b.file === file && p.source.includes(b.part))) continue;
      const key = keyOf(p);
      if (known.has(key) || safe.has(key)) {
        safe.add(key);
        continue;
      }
      // g and y change where matching starts, not how a match backtracks.
      const result = await check(p.source, p.flags.replace(/[gy]/g, ''));
      if (result.status === 'safe') {
        safe.add(key);
        continue;
      }
      const attack = result.status === 'vulnerable' ? ` (slow on ${result.attack.pattern.slice(0, 80)})` : '';
      unsafe.push(`${p.where} /${p.source}/${p.flags}: ${result.status}${attack}`);
    }
    if (rewrite && unsafe.length === 0)
      writeFileSync(
        VERDICTS_FILE,
        `${JSON.stringify({ checker: 'recheck 4.5.0', safe: [...safe].sort() }, null, 2)}\n`,
      );
    expect(unsafe).toEqual([]);
  });
});
