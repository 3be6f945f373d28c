// Pure SQL text helpers: identifier quoting, qualified-name parsing and `:name` binding.
// Nothing here talks to a server; names are checked against the catalog in catalog.ts.
import { InputError, showValue } from '../../../../shared/errors.ts';

/** Postgres truncates longer identifiers silently (NAMEDATALEN - 1), which could name another table. */
const MAX_IDENTIFIER_BYTES = 63;
const utf8 = new TextEncoder();

/** `a"b` → `"a""b"`. Every identifier that reaches SQL text goes through here. */
export function quoteIdent(name: string, field = 'identifier'): string {
  checkIdentifier(name, field, name);
  return `"${name.replaceAll('"', '""')}"`;
}

/** ['mart', 'mart_order_daily'] → `"mart"."mart_order_daily"`. */
export function quoteQualified(parts: readonly string[], field = 'identifier'): string {
  if (parts.length < 1 || parts.length > 3) {
    throw new InputError(`${field}: a qualified name has 1 to 3 parts, got ${parts.length}`, { field, value: parts });
  }
  return parts.map((part) => quoteIdent(part, field)).join('.');
}

function checkIdentifier(name: string, field: string, value: string): void {
  if (name.length === 0) {
    throw new InputError(`${field}: ${showValue(value)} has an empty name`, { field, value });
  }
  if (name.includes('\0')) {
    throw new InputError(`${field}: ${showValue(value)} contains a NUL character, which no PostgreSQL name can hold`, { field, value });
  }
  if (utf8.encode(name).length > MAX_IDENTIFIER_BYTES) {
    throw new InputError(
      `${field}: ${showValue(name)} is longer than PostgreSQL's ${MAX_IDENTIFIER_BYTES}-byte limit for names (it would be cut short silently)`,
      { field, value },
    );
  }
}

const UNQUOTED_START = /[A-Za-z_\u0080-\uFFFF]/;
const UNQUOTED_REST = /[A-Za-z0-9_$\u0080-\uFFFF]/;
const NAME_HINT = 'write it as schema.table (or just table); quote parts holding other characters, e.g. "My Schema"."My Table"';

/**
 * Parses `schema.table` the way PostgreSQL does: unquoted parts fold to lower case (ASCII only,
 * like the server), quoted parts keep their case and `""` stands for `"`. Anything that is not
 * exactly 1–3 names separated by dots is refused, so text like `t; drop table x --` never
 * reaches the catalog lookup, let alone SQL.
 */
export function parseQualifiedName(text: string, field: string): string[] {
  const fail = (reason: string): never => {
    throw new InputError(`${field}: ${showValue(text)} is not a valid table name: ${reason}; ${NAME_HINT}`, {
      field,
      value: text,
      hint: NAME_HINT,
    });
  };
  const parts: string[] = [];
  let i = 0;
  const skipSpace = (): void => {
    while (i < text.length && /\s/.test(text[i] ?? '')) i++;
  };
  skipSpace();
  for (;;) {
    const ch = text[i];
    if (ch === undefined) fail(parts.length === 0 ? 'it is empty' : 'it ends with a dot');
    else if (ch === '"') {
      let name = '';
      i++;
      for (;;) {
        const c = text[i];
        if (c === undefined) fail('a double quote is not closed');
        else if (c === '"' && text[i + 1] === '"') {
          name += '"';
          i += 2;
        } else if (c === '"') {
          i++;
          break;
        } else {
          name += c;
          i++;
        }
      }
      if (name.length === 0) fail('a quoted part is empty ("")');
      parts.push(name);
    } else if (UNQUOTED_START.test(ch)) {
      const start = i;
      while (i < text.length && UNQUOTED_REST.test(text[i] ?? '')) i++;
      parts.push(text.slice(start, i).replace(/[A-Z]/g, (c) => c.toLowerCase()));
    } else if (ch === '.') fail('a part before a dot is empty');
    else fail(`unexpected ${showValue(ch)} at position ${i + 1}`);

    skipSpace();
    if (i >= text.length) break;
    if (text[i] !== '.') {
      const rest = text.slice(i);
      fail(`unexpected ${showValue(rest.length > 30 ? `${rest.slice(0, 29)}…` : rest)} after ${showValue(parts.join('.'))}`);
    }
    i++;
    skipSpace();
  }
  if (parts.length > 3) fail(`it has ${parts.length} parts; at most 3 (database.schema.table) are allowed`);
  for (const part of parts) checkIdentifier(part, field, text);
  return parts;
}

export interface BoundQuery {
  text: string;
  values: unknown[];
}

export interface BindOptions {
  /** Text to put in place of the n-th distinct parameter (default `$n`); called per occurrence. */
  placeholder?: (n: number, name: string) => string;
}

const PARAM_START = /[A-Za-z_]/;
const PARAM_REST = /[A-Za-z0-9_]/;
const IDENT_CHAR = /[A-Za-z0-9_$\u0080-\uFFFF]/;

/**
 * Turns `:name` into `$1..$n` (the same name reuses its number) and returns the values in
 * order; values never enter the text. Skips what PostgreSQL would not read as a parameter:
 * `::casts`, `:=`, '…' and E'…' strings, "quoted identifiers", $tag$ bodies $tag$, -- and
 * nested /* *\/ comments.
 * **Hazard**: an array slice written `a[lo:hi]` reads `:hi` as a parameter; write `a[lo : hi]`.
 */
export function bindNamed(sql: string, params: Readonly<Record<string, unknown>>, options: BindOptions = {}): BoundQuery {
  const placeholder = options.placeholder ?? ((n: number) => `$${n}`);
  const numbers = new Map<string, number>();
  const values: unknown[] = [];
  const missing: string[] = [];
  let out = '';
  let i = 0;
  const copyUntil = (end: number): void => {
    out += sql.slice(i, end);
    i = end;
  };
  while (i < sql.length) {
    const ch = sql[i];
    const next = sql[i + 1];
    const prevIsIdent = i > 0 && IDENT_CHAR.test(sql[i - 1] ?? '');
    if (ch === "'") {
      const escapes = i > 0 && (sql[i - 1] === 'E' || sql[i - 1] === 'e') && !(i > 1 && IDENT_CHAR.test(sql[i - 2] ?? ''));
      copyUntil(endOfQuoted(sql, i, "'", escapes));
    } else if (ch === '"') {
      copyUntil(endOfQuoted(sql, i, '"', false));
    } else if (ch === '-' && next === '-') {
      const newline = sql.indexOf('\n', i);
      copyUntil(newline === -1 ? sql.length : newline);
    } else if (ch === '/' && next === '*') {
      copyUntil(endOfBlockComment(sql, i));
    } else if (ch === '$' && !prevIsIdent) {
      const tag = /^\$(?:[A-Za-z_\u0080-\uFFFF][A-Za-z0-9_\u0080-\uFFFF]*)?\$/.exec(sql.slice(i));
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        copyUntil(close === -1 ? sql.length : close + tag[0].length);
      } else if (/[0-9]/.test(next ?? '')) {
        throw new InputError(
          `the query uses a positional parameter ${showValue(/^\$[0-9]+/.exec(sql.slice(i))?.[0])}; name parameters instead (:partition_start, :partition_end, :run_id)`,
          { value: sql },
        );
      } else copyUntil(i + 1);
    } else if (ch === ':' && (next === ':' || next === '=')) {
      copyUntil(i + 2);
    } else if (ch === ':' && PARAM_START.test(next ?? '')) {
      let end = i + 1;
      while (end < sql.length && PARAM_REST.test(sql[end] ?? '')) end++;
      const name = sql.slice(i + 1, end);
      let n = numbers.get(name);
      if (n === undefined) {
        if (!Object.hasOwn(params, name)) {
          if (!missing.includes(name)) missing.push(name);
        } else {
          values.push(params[name]);
          n = values.length;
          numbers.set(name, n);
        }
      }
      out += n === undefined ? '$0' : placeholder(n, name);
      i = end;
    } else {
      copyUntil(i + 1);
    }
  }
  if (missing.length > 0) throw missingParams(missing, Object.keys(params), sql);
  return { text: out, values };
}

/** Index just past the closing quote; a doubled quote (or, with escapes, a backslash) continues. */
function endOfQuoted(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i];
    if (backslashEscapes && c === '\\') i += 2;
    else if (c === quote && sql[i + 1] === quote) i += 2;
    else if (c === quote) return i + 1;
    else i++;
  }
  return sql.length; // unterminated: the server reports it with a position
}

function endOfBlockComment(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  return sql.length;
}

function missingParams(missing: string[], bound: string[], sql: string): InputError {
  const list = (names: string[]): string => names.map((n) => `:${n}`).join(', ');
  const boundText = bound.length === 0 ? 'no parameters are bound' : `only ${list(bound)} ${bound.length === 1 ? 'is' : 'are'} bound`;
  const guesses = missing
    .map((name) => ({ name, guess: closest(name, bound) }))
    .filter((g): g is { name: string; guess: string } => g.guess !== undefined)
    .map((g) => `:${g.name} → :${g.guess}?`);
  const hint = guesses.length > 0 ? `did you mean ${guesses.join(', ')}` : 'rename the parameter or bind it';
  return new InputError(`the query uses ${list(missing)} but ${boundText} (${hint})`, { value: sql, hint });
}

/** The bound name within edit distance 2 of `name`, if exactly one is closest. */
function closest(name: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const d = editDistance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
