/**
 * YAML from a user's file, parsed within bounds the app's main process can afford. Measured
 * (bench/limits.ts): the `yaml` package spends a few microseconds per token, and its own
 * `uniqueKeys` check compares every key of a mapping with every other one, so a 50 MB file of
 * short keys froze the app for a minute. Here, in order:
 *
 *   1. the lexer alone counts tokens and flow nesting, and stops at the limit (cheap: it is a
 *      fifth of a parse), so no parse ever starts on more than LIMITS.yamlTokens tokens;
 *   2. the document is parsed without `uniqueKeys`; duplicate keys are found in one pass here;
 *   3. nesting is measured on the document, without recursion, before anything recurses;
 *   4. toJS expands aliases at most LIMITS.yamlAliases times (the "billion laughs" guard).
 */
import { isMap, isPair, isScalar, isSeq, Lexer, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { InputError } from '../../../shared/errors.ts';
import { LIMITS, overLimitError } from '../../../shared/limits.ts';

/** Returned for a file with no content (empty, or only comments). */
export const EMPTY: unique symbol = Symbol('empty YAML');

const at = (lines: LineCounter, offset: number) => {
  const { line, col } = lines.linePos(offset);
  return `${line}:${col}`;
};
const lineOf = (lines: LineCounter, offset: number) => lines.linePos(offset).line;

export function parseBoundedYaml(text: string, file: string, what: string): unknown {
  countTokens(text, file, what);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false });
  const syntax = doc.errors[0];
  if (syntax) {
    const first = syntax.message.split('\n')[0] ?? syntax.message;
    // The parser catches its own stack overflow on deep block nesting and reports it as an error.
    if (first.startsWith('Maximum call stack size exceeded'))
      throw depthError(file, what, `line ${lineOf(lines, syntax.pos[0])}`, LIMITS.yamlDepth + 1, true);
    throw new InputError(`${file}:${at(lines, syntax.pos[0])}: YAML syntax error: ${first}`, {
      file,
      hint: 'fix the YAML syntax at that line',
    });
  }
  if (doc.contents === null) return EMPTY;
  checkStructure(doc, file, what, lines);
  try {
    return doc.toJS({ maxAliasCount: LIMITS.yamlAliases });
  } catch (error) {
    throw new InputError(`${file}: ${(error as Error).message}`, { file });
  }
}

function countTokens(text: string, file: string, what: string): void {
  let tokens = 0;
  let offset = 0;
  let flow = 0;
  const line = () => text.slice(0, offset).split('\n').length;
  for (const token of new Lexer().lex(text)) {
    tokens += 1;
    if (token === '[' || token === '{') flow += 1;
    else if (token === ']' || token === '}') flow -= 1;
    if (flow > LIMITS.yamlDepth) throw depthError(file, what, `line ${line()}`, flow, false);
    if (tokens > LIMITS.yamlTokens) {
      throw overLimitError({
        file,
        what,
        at: `line ${line()}`,
        size: tokens,
        atLeast: true,
        limit: LIMITS.yamlTokens,
        unit: 'tokens',
        hint: 'a YAML token is a key, a value, an indentation or a punctuation mark; a job, plan or config file needs a few thousand at most (docs/limits.md)',
      });
    }
    offset += token.length;
  }
}

function depthError(file: string, what: string, where: string, depth: number, atLeast: boolean): InputError {
  return overLimitError({
    file,
    at: where,
    what: `nesting of the ${what}`,
    size: depth,
    atLeast,
    limit: LIMITS.yamlDepth,
    unit: 'levels',
    hint: `its mappings and lists nest deeper than any ${what} needs (docs/limits.md)`,
  });
}

/** Duplicate keys and nesting, in one pass over the document without recursion. */
function checkStructure(doc: Document, file: string, what: string, lines: LineCounter): void {
  const stack: { node: unknown; depth: number }[] = [{ node: doc.contents, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: unknown; depth: number };
    if (isMap(node) || isSeq(node)) {
      if (depth > LIMITS.yamlDepth) throw depthError(file, what, `line ${lineOf(lines, (node as Node).range?.[0] ?? 0)}`, depth, true);
    }
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = pair.key as Node | null;
        const name = isScalar(key) ? String(key.value) : key === null ? '' : String(key);
        if (seen.has(name))
          throw new InputError(`${file}:${at(lines, key?.range?.[0] ?? 0)}: YAML syntax error: Map keys must be unique`, {
            file,
            field: name,
            hint: 'each field may appear once in a mapping',
          });
        seen.add(name);
        if (key !== null && !isScalar(key)) stack.push({ node: key, depth: depth + 1 });
        stack.push({ node: pair.value, depth: depth + 1 });
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push({ node: isPair(item) ? item.value : item, depth: depth + 1 });
    }
  }
}
