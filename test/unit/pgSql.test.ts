import { describe, expect, it } from 'vitest';
import { InputError } from '../../shared/errors.ts';
import { explainConnectError, redactUrl } from '../../electron/engine/targets/postgres/connect.ts';
import { classifyPgError, describePgError, isLockTimeout } from '../../electron/engine/targets/postgres/errors.ts';
import { bindNamed, parseQualifiedName, quoteIdent, quoteQualified } from '../../electron/engine/targets/postgres/sql.ts';

const P = { partition_start: '2026-05-01', partition_end: '2026-05-02', run_id: 'bf-1' };

function thrown(fn: () => unknown): InputError {
  try {
    fn();
  } catch (err) {
    if (err instanceof InputError) return err;
    throw err;
  }
  throw new Error('expected an InputError');
}

describe('bindNamed', () => {
  const cases: [string, string, string, unknown[]][] = [
    ['plain parameters', 'where t >= :partition_start and t < :partition_end', 'where t >= $1 and t < $2', ['2026-05-01', '2026-05-02']],
    ['a repeated name reuses its number', 'select :run_id, :partition_start, :run_id', 'select $1, $2, $1', ['bf-1', '2026-05-01']],
    ['::casts are not parameters', 'select :partition_start::date, x::text', 'select $1::date, x::text', ['2026-05-01']],
    ['a cast right after a name', 'select :run_id::text||:run_id', 'select $1::text||$1', ['bf-1']],
    [':= is not a parameter', 'select f(a := 1, b => :run_id)', 'select f(a := 1, b => $1)', ['bf-1']],
    ['string literals', "select ':run_id', 'it''s :run_id', :run_id", "select ':run_id', 'it''s :run_id', $1", ['bf-1']],
    ['E strings with backslash escapes', "select E'\\' :run_id', :run_id", "select E'\\' :run_id', $1", ['bf-1']],
    ['a backslash is literal outside E strings', "select 'a\\', :run_id", "select 'a\\', $1", ['bf-1']],
    ['an identifier ending in e is not an E string', "select type'\\', :run_id", "select type'\\', $1", ['bf-1']],
    [
      'quoted identifiers',
      'select "col:run_id", "a"":run_id" from t where x = :run_id',
      'select "col:run_id", "a"":run_id" from t where x = $1',
      ['bf-1'],
    ],
    ['dollar quotes', 'select $$ :run_id $$, $fn$ :x $$ :y $fn$, :run_id', 'select $$ :run_id $$, $fn$ :x $$ :y $fn$, $1', ['bf-1']],
    ['$ inside an identifier', 'select a$b, :run_id from c$d$', 'select a$b, $1 from c$d$', ['bf-1']],
    ['line comments', 'select 1 -- :nope\n, :run_id', 'select 1 -- :nope\n, $1', ['bf-1']],
    ['a line comment at the end', 'select :run_id -- :nope', 'select $1 -- :nope', ['bf-1']],
    ['nested block comments', 'select /* a /* :nope */ :nope2 */ :run_id', 'select /* a /* :nope */ :nope2 */ $1', ['bf-1']],
    ['array slices with a number', 'select a[1:2], :run_id', 'select a[1:2], $1', ['bf-1']],
    ['a colon and a space', 'select a[lo : hi], :run_id', 'select a[lo : hi], $1', ['bf-1']],
    ['no parameters at all', 'select 1', 'select 1', []],
    ['names are case-sensitive and may hold digits', 'select :p_1, :P_1', 'select $1, $2', ['low', 'UP']],
  ];
  it.each(cases)('%s', (_name, sql, text, values) => {
    expect(bindNamed(sql, { ...P, p_1: 'low', P_1: 'UP' })).toEqual({ text, values });
  });

  it('keeps values out of the text, whatever they hold', () => {
    const hostile = "'); drop table orders; --";
    expect(bindNamed('select :v', { v: hostile })).toEqual({ text: 'select $1', values: [hostile] });
  });

  it('binds values of any type, null and undefined included', () => {
    const d = new Date(0);
    expect(bindNamed('select :a, :b, :c, :d', { a: null, b: undefined, c: 3, d })).toEqual({
      text: 'select $1, $2, $3, $4',
      values: [null, undefined, 3, d],
    });
  });

  it('lets the caller choose the placeholder text', () => {
    const seen: string[] = [];
    const bound = bindNamed('select :a, :b, :a', { a: 1, b: 2 }, { placeholder: (n, name) => (seen.push(`${n}:${name}`), `p${n}`) });
    expect(bound).toEqual({ text: 'select p1, p2, p1', values: [1, 2] });
    expect(seen).toEqual(['1:a', '2:b', '1:a']);
  });

  const missing: [string, string, Record<string, unknown>, string][] = [
    [
      'a typo gets a suggestion',
      'where t < :partition_ed',
      P,
      'the query uses :partition_ed but only :partition_start, :partition_end, :run_id are bound (did you mean :partition_ed → :partition_end?)',
    ],
    [
      'several missing names',
      'select :a, :b, :a',
      { run_id: 1 },
      'the query uses :a, :b but only :run_id is bound (rename the parameter or bind it)',
    ],
    ['nothing bound', 'select :x', {}, 'the query uses :x but no parameters are bound (rename the parameter or bind it)'],
    [
      'an array slice with a name',
      'select a[lo:hi]',
      P,
      'the query uses :hi but only :partition_start, :partition_end, :run_id are bound (rename the parameter or bind it)',
    ],
    [
      'inherited properties do not count',
      'select :toString',
      {},
      'the query uses :toString but no parameters are bound (rename the parameter or bind it)',
    ],
  ];
  it.each(missing)('refuses missing names: %s', (_name, sql, params, message) => {
    expect(thrown(() => bindNamed(sql, params)).message).toBe(message);
  });

  it('refuses positional parameters, which would collide with the numbering', () => {
    expect(thrown(() => bindNamed('select $1, :run_id', P)).message).toBe(
      'the query uses a positional parameter "$1"; name parameters instead (:partition_start, :partition_end, :run_id)',
    );
  });
});

describe('parseQualifiedName', () => {
  const good: [string, string[]][] = [
    ['mart.mart_order_daily', ['mart', 'mart_order_daily']],
    ['orders', ['orders']],
    ['Mart.Orders', ['mart', 'orders']],
    ['"Mart"."Orders"', ['Mart', 'Orders']],
    ['"we.ird"."t""x"', ['we.ird', 't"x']],
    ['analytics.mart.t', ['analytics', 'mart', 't']],
    ['  mart . t  ', ['mart', 't']],
    ['"t; drop table x --"', ['t; drop table x --']],
    // Like the server (UTF-8), only ASCII letters fold: É stays É.
    ['ÉTÉ.données', ['ÉtÉ', 'données']],
    ['t$1', ['t$1']],
  ];
  it.each(good)('%s', (text, parts) => {
    expect(parseQualifiedName(text, 'target.table')).toEqual(parts);
  });

  const bad: [string, string][] = [
    ['t; drop table x --', 'unexpected "; drop table x --" after "t"'],
    ['t -- comment', 'unexpected "-- comment" after "t"'],
    ['t /* c */', 'unexpected "/* c */" after "t"'],
    ['"unclosed', 'a double quote is not closed'],
    ['a."b', 'a double quote is not closed'],
    ['""', 'a quoted part is empty ("")'],
    ['', 'it is empty'],
    ['   ', 'it is empty'],
    ['mart.', 'it ends with a dot'],
    ['.t', 'a part before a dot is empty'],
    ['a..t', 'a part before a dot is empty'],
    ['a.b.c.d', 'it has 4 parts; at most 3 (database.schema.table) are allowed'],
    ['1table', 'unexpected "1" at position 1'],
    ["o'brien", `unexpected "'brien" after "o"`],
    ['a b', 'unexpected "b" after "a"'],
    ['"a"b', 'unexpected "b" after "a"'],
    ['t\0', 'unexpected "\\u0000" after "t"'],
  ];
  it.each(bad)('refuses %j', (text, reason) => {
    const err = thrown(() => parseQualifiedName(text, 'target.table'));
    expect(err.message).toBe(
      `target.table: ${JSON.stringify(text)} is not a valid table name: ${reason}; write it as schema.table (or just table); quote parts holding other characters, e.g. "My Schema"."My Table"`,
    );
    expect(err.details).toMatchObject({ field: 'target.table', value: text });
  });

  it('refuses NUL inside quotes and names longer than PostgreSQL keeps', () => {
    expect(thrown(() => parseQualifiedName('"a\0b"', 'source.table')).message).toBe(
      'source.table: "\\"a\\u0000b\\"" contains a NUL character, which no PostgreSQL name can hold',
    );
    const long = 'x'.repeat(64);
    expect(thrown(() => parseQualifiedName(long, 'source.table')).message).toBe(
      `source.table: "${long}" is longer than PostgreSQL's 63-byte limit for names (it would be cut short silently)`,
    );
    expect(parseQualifiedName('x'.repeat(63), 'f')).toEqual(['x'.repeat(63)]);
  });
});

describe('quoteIdent and quoteQualified', () => {
  const cases: [string, string][] = [
    ['orders', '"orders"'],
    ['a"b', '"a""b"'],
    ['we"ird; drop table orders; --', '"we""ird; drop table orders; --"'],
    ['Ünïcode', '"Ünïcode"'],
  ];
  it.each(cases)('%s → %s', (name, quoted) => {
    expect(quoteIdent(name)).toBe(quoted);
    expect(parseQualifiedName(quoted, 'f')).toEqual([name]);
  });

  it('refuses empty names and NUL', () => {
    expect(thrown(() => quoteIdent('')).message).toBe('identifier: "" has an empty name');
    expect(thrown(() => quoteIdent('a\0', 'target.key[0]')).message).toBe(
      'target.key[0]: "a\\u0000" contains a NUL character, which no PostgreSQL name can hold',
    );
  });

  it('round-trips qualified names', () => {
    expect(quoteQualified(['odd."schema', 'we"ird'])).toBe('"odd.""schema"."we""ird"');
    expect(parseQualifiedName(quoteQualified(['odd."schema', 'we"ird']), 'f')).toEqual(['odd."schema', 'we"ird']);
    expect(thrown(() => quoteQualified([])).message).toBe('identifier: a qualified name has 1 to 3 parts, got 0');
    expect(thrown(() => quoteQualified(['a', 'b', 'c', 'd'])).message).toBe('identifier: a qualified name has 1 to 3 parts, got 4');
  });
});

describe('redactUrl', () => {
  const cases: [string, string][] = [
    ['postgres://backfill@db.internal:5432/analytics', 'postgres://backfill@db.internal:5432/analytics'],
    ['postgres://backfill:s3cret@db.internal:5432/analytics', 'postgres://backfill:***@db.internal:5432/analytics'],
    ['postgresql://u:p@ss:w@rd@h/db', 'postgresql://u:***@h/db'],
    ['postgres://u@h/db?sslmode=require&password=x&a=1', 'postgres://u@h/db?sslmode=require&password=***&a=1'],
    ['postgres://h:5432/db', 'postgres://h:5432/db'],
    ['not a url', 'not a url'],
  ];
  it.each(cases)('%s', (url, redacted) => {
    expect(redactUrl(url)).toBe(redacted);
  });
});

function pgError(code: string, message: string, extra: Record<string, string> = {}): Error {
  return Object.assign(new Error(message), { code, severity: 'ERROR' }, extra);
}
function nodeError(code: string, message = code): Error {
  return Object.assign(new Error(message), { code });
}

describe('classifyPgError', () => {
  const cases: [string, unknown, 'transient' | 'permanent'][] = [
    ['serialization failure', pgError('40001', 'could not serialize access'), 'transient'],
    ['deadlock', pgError('40P01', 'deadlock detected'), 'transient'],
    ['lock timeout', pgError('55P03', 'canceling statement due to lock timeout'), 'transient'],
    ['admin shutdown', pgError('57P01', 'terminating connection due to administrator command'), 'transient'],
    ['crash shutdown', pgError('57P02', 'terminating connection because of crash of another server process'), 'transient'],
    ['cannot connect now', pgError('57P03', 'the database system is starting up'), 'transient'],
    ['too many connections', pgError('53300', 'sorry, too many clients already'), 'transient'],
    ['connection exception class', pgError('08006', 'connection failure'), 'transient'],
    ['statement timeout is permanent', pgError('57014', 'canceling statement due to statement timeout'), 'permanent'],
    ['unique violation', pgError('23505', 'duplicate key value violates unique constraint "pk"'), 'permanent'],
    ['syntax error', pgError('42601', 'syntax error at or near "selec"'), 'permanent'],
    ['raise exception', pgError('P0001', 'boom'), 'permanent'],
    ['ECONNRESET', nodeError('ECONNRESET'), 'transient'],
    ['EPIPE (not a SQLSTATE)', nodeError('EPIPE'), 'transient'],
    ['ETIMEDOUT', nodeError('ETIMEDOUT'), 'transient'],
    ['ECONNREFUSED', nodeError('ECONNREFUSED'), 'transient'],
    ['ENOTFOUND', nodeError('ENOTFOUND'), 'permanent'],
    ['connection terminated', new Error('Connection terminated unexpectedly'), 'transient'],
    ['client connection error', new Error('Client has encountered a connection error and is not queryable'), 'transient'],
    ['a wrapped cause', new Error('partition 2026-05-01 failed', { cause: pgError('40P01', 'deadlock detected') }), 'transient'],
    ['an aggregate of refusals', Object.assign(new AggregateError([nodeError('ECONNREFUSED')], 'connect failed')), 'transient'],
    ['a plain error', new Error('boom'), 'permanent'],
    ['not an error at all', 'boom', 'permanent'],
    ['null', null, 'permanent'],
  ];
  it.each(cases)('%s → %s', (_name, err, expected) => {
    expect(classifyPgError(err)).toBe(expected);
  });

  it('tells lock timeouts apart', () => {
    expect(isLockTimeout(pgError('55P03', 'canceling statement due to lock timeout'))).toBe(true);
    expect(isLockTimeout(new Error('wrapped', { cause: pgError('55P03', 'x') }))).toBe(true);
    expect(isLockTimeout(pgError('57014', 'canceling statement due to statement timeout'))).toBe(false);
    expect(isLockTimeout(undefined)).toBe(false);
  });
});

describe('describePgError', () => {
  const cases: [unknown, string][] = [
    [pgError('55P03', 'canceling statement due to lock timeout'), 'SQLSTATE 55P03: canceling statement due to lock timeout'],
    [
      pgError('23505', 'duplicate key value violates unique constraint "pk"', { detail: 'Key (id)=(1) already exists.' }),
      'SQLSTATE 23505: duplicate key value violates unique constraint "pk" — detail: Key (id)=(1) already exists.',
    ],
    [
      pgError('42883', 'function nope() does not exist', { hint: 'No function matches.\nYou might need casts.' }),
      'SQLSTATE 42883: function nope() does not exist — hint: No function matches. You might need casts.',
    ],
    [new Error('outer', { cause: pgError('40P01', 'deadlock detected') }), 'SQLSTATE 40P01: deadlock detected'],
    [nodeError('ECONNRESET', 'read ECONNRESET'), 'ECONNRESET: read ECONNRESET'],
    [new Error('plain'), 'plain'],
    ['text', 'text'],
  ];
  it.each(cases)('→ %s', (err, line) => {
    expect(describePgError(err)).toBe(line);
  });
});

describe('explainConnectError', () => {
  const target = { host: 'db.internal', port: 5432, user: 'backfill', database: 'analytics' };
  const cases: [unknown, string][] = [
    [nodeError('ECONNREFUSED'), 'connection refused: is PostgreSQL running at db.internal:5432?'],
    [nodeError('ENOTFOUND'), 'host "db.internal" was not found: check the host in the connection url'],
    [nodeError('ETIMEDOUT'), 'db.internal:5432 cannot be reached (ETIMEDOUT): check the host, the port and any firewall or VPN'],
    [
      pgError('28P01', 'password authentication failed for user "backfill"'),
      'password authentication failed for user "backfill": set the password_env variable (or the saved password) to this user\'s password',
    ],
    [
      pgError('3D000', 'database "analytics" does not exist'),
      'database "analytics" does not exist: check the database in the connection url',
    ],
    [
      new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'),
      'the server asks for a password for user "backfill" but none was given: set the password_env variable',
    ],
    [
      new Error('timeout expired'),
      'no answer from db.internal:5432 within the connect timeout: check the host, the port and any firewall or VPN',
    ],
    [pgError('XX000', 'odd'), 'SQLSTATE XX000: odd'],
  ];
  it.each(cases)('%s', (err, text) => {
    expect(explainConnectError(err, target)).toBe(text);
  });
});
