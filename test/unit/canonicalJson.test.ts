import { describe, expect, it } from 'vitest';
import { jobHash, planHash, sha256Hex } from '../../electron/engine/plan/hash.ts';
import { canonicalJson } from '../../shared/canonicalJson.ts';
import { jobSchema, planSchema } from '../../shared/schemas.ts';

describe('canonicalJson (RFC 8785)', () => {
  const cases: { name: string; value: unknown; json: string }[] = [
    {
      name: 'keys sorted, no whitespace',
      value: { b: 1, a: [true, null, 'x'], c: { z: 0, y: -0 } },
      json: '{"a":[true,null,"x"],"b":1,"c":{"y":0,"z":0}}',
    },
    {
      // RFC 8785 §3.2.2 example
      name: 'numbers and strings as ECMAScript prints them',
      value: {
        // eslint-disable-next-line no-loss-of-precision -- the RFC's own input, rounded on purpose
        numbers: [333333333.33333329, 1e30, 4.5, 2e-3, 0.000000000000000000000000001],
        string: '\u20ac$\u000F\u000aA\'\u0042\u0022\u005c\\"/',
        literals: [null, true, false],
      },
      json: '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    },
    {
      // RFC 8785 §3.2.3: keys sorted by UTF-16 code units, not code points
      name: 'keys sorted by UTF-16 code units',
      value: {
        '\u20ac': 'Euro Sign',
        '\r': 'Carriage Return',
        '\ufb33': 'Hebrew Letter Dalet With Dagesh',
        '1': 'One',
        '\ud83d\ude00': 'Emoji: Grinning Face',
        '\u0080': 'Control',
        '\u00f6': 'Latin Small Letter O With Diaeresis',
      },
      json: '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","דּ":"Hebrew Letter Dalet With Dagesh"}',
    },
    { name: 'undefined properties are left out, as in JSON', value: { a: 1, owner: undefined }, json: '{"a":1}' },
    { name: 'a bare string', value: 'plan', json: '"plan"' },
    { name: 'an empty object', value: {}, json: '{}' },
  ];
  it.each(cases)('$name', ({ value, json }) => {
    expect(canonicalJson(value)).toBe(json);
  });

  const refused: { name: string; value: unknown; message: string }[] = [
    { name: 'undefined', value: undefined, message: 'canonicalJson: $ is undefined, which JSON cannot represent' },
    {
      name: 'undefined in a list',
      value: { a: [1, undefined] },
      message: 'canonicalJson: $.a[1] is undefined, which JSON cannot represent',
    },
    { name: 'NaN', value: { stop: { ratio: Number.NaN } }, message: 'canonicalJson: $.stop.ratio is NaN, which JSON cannot represent' },
    { name: 'Infinity', value: [Infinity], message: 'canonicalJson: $[0] is Infinity, which JSON cannot represent' },
    { name: 'a function', value: { f: () => 1 }, message: 'canonicalJson: $.f is a function, which JSON cannot represent' },
    { name: 'a bigint', value: { n: 10n }, message: 'canonicalJson: $.n is a bigint, which JSON cannot represent' },
    { name: 'a symbol', value: { s: Symbol('x') }, message: 'canonicalJson: $.s is a symbol, which JSON cannot represent' },
    {
      name: 'a Date',
      value: { at: new Date(0) },
      message: 'canonicalJson: $.at is a Date, not a plain object: convert it to JSON values first',
    },
    { name: 'a Map', value: { m: new Map() }, message: 'canonicalJson: $.m is a Map, not a plain object: convert it to JSON values first' },
  ];
  it.each(refused)('refuses $name', ({ value, message }) => {
    expect(() => canonicalJson(value)).toThrow(message);
  });

  it('refuses a cycle but not a shared object', () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => canonicalJson(cycle)).toThrow('canonicalJson: $.self refers back to itself (a cycle)');
  });
});

describe('hashes', () => {
  it('sha256Hex matches the standard vectors, for text and bytes', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex(Buffer.from('abc'))).toBe(sha256Hex('abc'));
  });

  const plan = {
    request_id: 'bf-1',
    job: 'order-daily-mart',
    range: { from: '2026-05-01', to: '2026-07-01' },
    write_mode: 'overwrite-partition',
  } as const;

  it('a plan hashes its canonical JSON after defaults', () => {
    const parsed = planSchema.parse(plan);
    expect(planHash(parsed)).toBe(sha256Hex(canonicalJson(parsed)));
    expect(canonicalJson(parsed)).toBe(
      '{"job":"order-daily-mart","range":{"from":"2026-05-01","to":"2026-07-01"},"reason":"","request_id":"bf-1","stop":{"check_interval_ms":1000,"max_consecutive_failures":3,"probes":[]},"throttle":{"concurrency":1,"sleep_ms":0},"write_mode":"overwrite-partition"}',
    );
  });

  it('an omitted default, an explicit default, key order and undefined optionals hash the same', () => {
    const explicit = planSchema.parse({
      ...plan,
      reason: '',
      throttle: { concurrency: 1, sleep_ms: 0 },
      stop: { max_consecutive_failures: 3 },
      owner: undefined,
    });
    const reordered = planSchema.parse({
      write_mode: plan.write_mode,
      range: { to: '2026-07-01', from: '2026-05-01' },
      job: plan.job,
      request_id: plan.request_id,
    });
    expect(planHash(explicit)).toBe(planHash(planSchema.parse(plan)));
    expect(planHash(reordered)).toBe(planHash(planSchema.parse(plan)));
  });

  it('any change to a plan changes its hash', () => {
    const base = planHash(planSchema.parse(plan));
    const variants = [
      { ...plan, range: { from: '2026-05-01', to: '2026-07-02' } },
      { ...plan, write_mode: 'upsert' },
      { ...plan, throttle: { sleep_ms: 1 } },
      { ...plan, reason: ' ' },
      { ...plan, owner: 'data-platform' },
    ];
    const hashes = variants.map((v) => planHash(planSchema.parse(v)));
    expect(new Set([base, ...hashes]).size).toBe(variants.length + 1);
  });

  it('a job hashes after defaults too', () => {
    const job = {
      name: 'j',
      unit: 'day',
      write_mode: 'upsert',
      source: { connection: 'w', query: 'select 1' },
      target: { connection: 'w', table: 't', partition_column: 'd' },
    } as const;
    const withDefaults = { ...job, timezone: 'UTC', classification: {}, target: { ...job.target, key: [] }, validation: [], quality: [] };
    expect(jobHash(jobSchema.parse(job))).toBe(jobHash(jobSchema.parse(withDefaults)));
    expect(jobHash(jobSchema.parse(job))).not.toBe(jobHash(jobSchema.parse({ ...job, timezone: 'Asia/Seoul' })));
  });
});
