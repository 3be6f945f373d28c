/**
 * The pure parts of the change by key: exact decimal sums, totals over partitions, the grain
 * read from a source query's GROUP BY, and the SQL text (no user name is ever spelled in the join).
 */
import { describe, expect, it } from 'vitest';
import { addDecimal, absDecimal, compareAbsDecimal, subDecimal, sumDecimals } from '../../shared/decimal.ts';
import { describeKeyChange, describeMeasure, totalKeyChange, type KeyChange } from '../../shared/keyChange.ts';
import { sourceGrouping } from '../../electron/engine/sql/sourceGrouping.ts';
import { decodeMask, sampleSql, summarySql, type DiffShape } from '../../electron/engine/targets/postgres/changeByKeySql.ts';

describe('decimal texts', () => {
  it.each([
    ['0.1', '0.2', '0.3'],
    ['4410.50', '-10.5', '4400.00'],
    ['-3', '3', '0'],
    ['99999999999999999999.99', '0.01', '100000000000000000000.00'],
    [null, '7', '7'],
  ] as const)('%s + %s = %s', (a, b, sum) => {
    expect(addDecimal(a, b)).toBe(sum);
  });

  it('subtracts, takes absolute values and compares sizes exactly; falls back to numbers for floats', () => {
    expect(subDecimal('10.00', '12.5')).toBe('-2.50');
    expect(absDecimal('-2.50')).toBe('2.50');
    expect(compareAbsDecimal('-3', '2.99')).toBe(1);
    expect(compareAbsDecimal('2', '-2.00')).toBe(0);
    expect(sumDecimals(['1.1', '2.2', '3.3'])).toBe('6.6');
    expect(addDecimal('1.5e+2', '1')).toBe('151');
  });
});

function change(partition: string, over: Partial<KeyChange>): KeyChange {
  return {
    partition,
    method: 'full outer join',
    grain: ['refund_date', 'reason'],
    grainFrom: 'target.key',
    columns: ['refund_date', 'reason', 'refunds', 'refund_amount'],
    before: 5,
    after: 6,
    added: 1,
    removed: 0,
    changed: 1,
    unchanged: 4,
    columnChanges: { refunds: 1, refund_amount: 1 },
    measures: [{ column: 'refund_amount', before: '100.10', after: '100.10', net: '0', moved: '40.20' }],
    sample: [{ kind: 'added', key: [partition, 'damaged'], before: null, after: [partition, 'damaged', '2', '20.10'] }],
    sampleLimit: 20,
    movers: [
      { column: 'reason', value: 'damaged', keys: 1, net: { refund_amount: '20.10' } },
      { column: 'reason', value: 'other', keys: 1, net: { refund_amount: '-20.10' } },
    ],
    digestRows: 0,
    complete: true,
    notes: [],
    ...over,
  };
}

describe('totals over partitions', () => {
  it('sums counts, sums and movers exactly, and keeps the sample bounded', () => {
    const t = totalKeyChange(
      [
        change('2026-05-01', {}),
        change('2026-05-02', { added: 0, changed: 0, unchanged: 6, sample: [], movers: [] }),
        change('2026-05-03', {}),
      ],
      1,
    );
    expect(t).toMatchObject({ partitions: 3, partitionsChanged: 2, added: 2, changed: 2, unchanged: 14, before: 15, after: 18 });
    expect(t.columnChanges).toEqual({ refunds: 3, refund_amount: 3 });
    expect(t.measures).toEqual([{ column: 'refund_amount', before: '300.30', after: '300.30', net: '0', moved: '120.60' }]);
    expect(t.movers.map((m) => [m.value, m.keys, m.net.refund_amount])).toEqual([
      ['damaged', 2, '40.20'],
      ['other', 2, '-40.20'],
    ]);
    expect(t.sample).toHaveLength(1);
    expect(describeMeasure(t.measures[0] as never)).toBe('refund_amount: 300.30 → 300.30 (net 0), 120.60 moved between keys');
    expect(describeKeyChange(t)).toBe('2 added, 0 removed, 2 changed by (refund_date, reason); 14 unchanged');
  });
});

describe("the grain from the source query's GROUP BY", () => {
  it.each([
    [
      'select cast(paid_at as date) as order_date, customer_id, count(*) as n from orders group by 1, 2',
      ['order_date', 'customer_id', 'n'],
      ['order_date', 'customer_id'],
    ],
    [
      'select cast(paid_at as date) as order_date, customer_id, count(*) as n from orders group by cast(paid_at as date), customer_id',
      ['order_date', 'customer_id', 'n'],
      ['order_date', 'customer_id'],
    ],
    ['select o.day, o.kind, sum(x) as s from t o group by o.kind, o.day', ['day', 'kind', 's'], ['kind', 'day']],
    ['select day as d, count(*) as n from t where day >= :partition_start group by d', ['d', 'n'], ['d']],
  ])('%s → %j', async (sql, outputs, grain) => {
    expect(await sourceGrouping(sql, outputs)).toEqual(grain);
  });

  it.each([
    ['select * from t group by 1', ['a']],
    ['select a, count(*) from t group by rollup (a)', ['a', 'count']],
    ['select a from t union select b from u', ['a']],
    ['select a, b from t', ['a', 'b']],
    ['select a, count(*) from t group by lower(a)', ['a', 'count']],
    ['select a, count(*) from t group by 7', ['a', 'count']],
  ])('%s → none (no guess)', async (sql, outputs) => {
    expect(await sourceGrouping(sql, outputs)).toBeUndefined();
  });
});

describe('the join text', () => {
  const shape: DiffShape = {
    columns: [
      { name: 'a', type: 'date', builtin: true, notNull: true, comparable: true },
      { name: 'p', type: 'text', builtin: true, notNull: false, comparable: true },
      { name: 'b"; drop table x; --', type: 'numeric(12,2)', builtin: true, notNull: true, comparable: true },
      { name: 'doc', type: 'json', builtin: true, notNull: false, comparable: false },
    ],
    grain: [0, 1],
    measures: [2],
    movers: [1],
  };
  it('names columns only positionally, matches a nullable grain by NULL-ness and text, and compares a json column as text', () => {
    const sql = summarySql('SELECT 1', 'SELECT 2', shape);
    expect(sql).not.toContain('drop table');
    expect(sql).toContain('AS a(c0, c1, c2, c3, p)');
    expect(sql).toContain(`a.c0 = b.c0 AND (a.c1 IS NULL) = (b.c1 IS NULL) AND coalesce(a.c1::text, '') = coalesce(b.c1::text, '')`);
    expect(sql).toContain('a.c3::text IS DISTINCT FROM b.c3::text');
    expect(sql).toMatch(/GROUP BY GROUPING SETS \(\(\(CASE WHEN a\.p IS NULL THEN 1 ELSE 0 END \+ .*\), coalesce\(a\.c1, b\.c1\)\)\)/);
    expect(summarySql('SELECT 1', 'SELECT 2', shape, false)).toMatch(/GROUP BY 2$/);
    expect(sampleSql('SELECT 1', 'SELECT 2', shape)).toMatch(/LIMIT :sample_limit$/);
  });
});

describe('the difference mask', () => {
  it("reads an integer mask and a wide table's text mask the same way", () => {
    expect(decodeMask(2 + 8, 3)).toEqual([false, true, false, true, false]);
    expect(decodeMask('01010', 3)).toEqual([false, true, false, true, false]);
  });
});
