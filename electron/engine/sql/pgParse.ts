/**
 * PostgreSQL's own parser (libpg-query: the server's grammar compiled to WebAssembly), for what
 * the engine must know about SQL a user wrote before it runs: is it exactly one read-only
 * SELECT (readOnlySelect.ts), and which tables does it read (impact scope). A regex cannot
 * answer either: comments, strings, dollar quotes and nested CTEs all hide statements.
 *
 * The module, its JavaScript and its WebAssembly, is loaded on first use (about 25 ms), so
 * commands and jobs that never look at Postgres SQL (`status`, an S3 → S3 run) do not pay for it.
 */
import { createRequire } from 'node:module';
import type * as PgQuery from 'libpg-query';
import type { ParseResult } from 'libpg-query';
import { bindNamed } from '../targets/postgres/sql.ts';

// A require, not an import(): the package is CommonJS, which an import() would have Node read
// with its CommonJS lexer first — a module compiled from source under the data commands' V8
// flags (bin/v8Profile.mjs).
const require = createRequire(import.meta.url);
let loading: Promise<typeof PgQuery> | undefined;

function parser(): Promise<typeof PgQuery> {
  loading ??= Promise.resolve().then(async () => {
    const lib = require('libpg-query') as typeof PgQuery;
    await lib.loadModule();
    return lib;
  });
  return loading;
}

/** A syntax error, with the 1-based position in the text given (after `:name` binding). */
export class PgSyntaxError extends Error {
  override readonly name = 'PgSyntaxError';
  constructor(
    message: string,
    readonly position: number | undefined,
  ) {
    super(message);
  }
}

/**
 * Parses `sql`, whose `:partition_start`-style parameters are first bound to `$n` exactly as
 * they will be sent (bindNamed), so the tree is that of the statement the server receives.
 */
export async function parsePg(
  sql: string,
  params: readonly string[] = ['partition_start', 'partition_end', 'run_id'],
): Promise<ParseResult> {
  const { parseSync } = await parser();
  const bound = bindNamed(sql, Object.fromEntries(params.map((p) => [p, null])), {
    placeholder: (n) => `$${n}`,
  });
  try {
    return parseSync(bound.text);
  } catch (error) {
    const details = (error as { sqlDetails?: { cursorPosition?: number } }).sqlDetails;
    throw new PgSyntaxError((error as Error).message, details?.cursorPosition);
  }
}

export type PgNode = Record<string, unknown>;

/**
 * Every node of a parse tree, depth first, with the name of the node type it sits under
 * (`SelectStmt`, `FuncCall`, `RangeVar` …). Iterative: a hostile text nested thousands deep
 * cannot overflow the stack.
 */
export function* nodes(tree: unknown): Generator<{ type: string; node: PgNode }> {
  const stack: unknown[] = [tree];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value as PgNode)) {
        if (/^[A-Z]/.test(key) && typeof child === 'object' && child !== null && !Array.isArray(child)) {
          yield { type: key, node: child as PgNode };
        }
        stack.push(child);
      }
    }
  }
}

/** The `sval`s of a list of `String` nodes: a qualified name's parts, lower case as parsed. */
export function nameParts(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((item) => ((item as { String?: { sval?: string } }).String?.sval ?? '').toString());
}
