/**
 * The repository's TypeScript sources, parsed with the TypeScript compiler (the one parser that reads
 * every construct we write: type-only imports, `import()` types, regex literals), for the architecture
 * tests that check rules across the tree.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.turbo', 'work', '.data']);

/** Every `.ts` file under `dir` (relative to the root, `/`-separated), build output and dependencies skipped. */
export function sourceFiles(dir: string, options: { tests?: boolean } = {}): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(child);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        if (options.tests || !isTestFile(child)) out.push(child);
      }
    }
  };
  walk(dir);
  return out.sort();
}

/** Test files and test-only helpers: `*.test.ts`, `*.test-support.ts`, anything under a `test/` folder. */
export function isTestFile(file: string): boolean {
  return /\.test(-support)?\.ts$/.test(file) || /(^|\/)test\//.test(file);
}

/** The parsed syntax tree of a file relative to the root. */
export function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
}

/** One module a file imports: the specifier, its line, and whether only types cross. */
export interface ImportEdge {
  specifier: string;
  line: number;
  typeOnly: boolean;
}

/** Every module `file` imports or re-exports: static, dynamic `import()` and `import('x').T` types. */
export function importsOf(file: string): ImportEdge[] {
  const source = parse(file);
  const edges: ImportEdge[] = [];
  const add = (node: ts.Node, specifier: ts.Expression | undefined, typeOnly: boolean) => {
    if (!specifier || !ts.isStringLiteralLike(specifier)) return;
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    edges.push({ specifier: specifier.text, line, typeOnly });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      add(node, node.moduleSpecifier, node.importClause?.isTypeOnly ?? false);
    } else if (ts.isExportDeclaration(node)) {
      add(node, node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal as ts.Expression, true);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0], false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

/** Every regular expression written in `file`: regex literals and `RegExp('...')` string arguments. */
export function regexesOf(file: string): { text: string; line: number }[] {
  const source = parse(file);
  const found: { text: string; line: number }[] = [];
  const at = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node: ts.Node) => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      found.push({ text: node.getText(source), line: at(node) });
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      const first = node.arguments?.[0];
      if (first && ts.isStringLiteralLike(first)) found.push({ text: first.text, line: at(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every template literal with substitutions in `file`: its literal pieces (head, then each span's tail). */
export function templatesOf(file: string): { pieces: string[]; text: string; line: number }[] {
  const source = parse(file);
  const found: { pieces: string[]; text: string; line: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isTemplateExpression(node)) {
      found.push({
        pieces: [node.head.text, ...node.templateSpans.map((span) => span.literal.text)],
        text: node.getText(source),
        line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
