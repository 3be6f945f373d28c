import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { jobSchema, configSchema } from '../../shared/schemas.ts';
import { partitionRange } from '../../shared/partitions.ts';
import { automatedPrefixRefusals, suggestedPath } from '../../electron/engine/runbook/prefixGate.ts';
import {
  MANIFEST_FORMAT,
  markOf,
  parseManifest,
  partitionChecksum,
  serializeManifest,
  type PartitionManifest,
} from '../../electron/engine/targets/s3/manifest.ts';
import { describeS3Error, isTransientS3Error } from '../../electron/engine/targets/s3/errors.ts';
import { blocksOf, countLines, endOfLine, lines } from '../../electron/engine/targets/s3/records.ts';
import { copyBlocks } from '../../electron/engine/targets/s3/pgJsonSource.ts';
import { mapLimit } from '../../electron/engine/targets/s3/concurrency.ts';

const manifest: PartitionManifest = {
  format: MANIFEST_FORMAT,
  partition: '2026-01-20T19',
  run_id: 'bf-1',
  plan_hash: 'ab',
  attempt: 2,
  records: 3,
  bytes: 30,
  checksum: partitionChecksum([{ sha256: 'aa' }, { sha256: 'bb' }]),
  objects: [
    { key: 'k#0', size: 10, sha256: 'aa', records: 2 },
    { key: 'k#1', size: 20, sha256: 'bb', records: 1 },
  ],
  source: { records: 3, objects: null, bytes: null },
  published_at: '2026-01-21T00:00:00.000Z',
};

describe('the _complete manifest', () => {
  it('round-trips, and is the partition marker', () => {
    expect(parseManifest(serializeManifest(manifest))).toEqual(manifest);
    expect(markOf(manifest)).toEqual({
      partitionKey: '2026-01-20T19',
      runId: 'bf-1',
      planHash: 'ab',
      attempt: 2,
      rowsWritten: 3,
      checksum: manifest.checksum,
      publishedAt: '2026-01-21T00:00:00.000Z',
    });
  });

  it.each([[''], ['not json'], ['{}'], ['{"format":"other"}'], ['null']])("an automated export's marker %j is not ours", (text) => {
    expect(parseManifest(text)).toBeNull();
  });

  it('the checksum depends on the content, in order', () => {
    // sha256 of "aa\nbb\n"
    expect(partitionChecksum([{ sha256: 'aa' }, { sha256: 'bb' }])).toBe(
      'sha256:329d670e59ead1543a2d36865895972560bc434204c5f4a0c8219005dd312719',
    );
    expect(partitionChecksum([{ sha256: 'aa' }, { sha256: 'bb' }])).not.toBe(partitionChecksum([{ sha256: 'bb' }, { sha256: 'aa' }]));
    expect(partitionChecksum([])).toBe('sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('the daily-ETL guard', () => {
  const config = configSchema.parse({
    connections: { lake: { kind: 's3', bucket: 'amplitude-raw-bucket' }, warehouse: { kind: 'postgres', url: 'postgres://u@h/db' } },
  });
  const job = (target: Record<string, unknown>, source?: Record<string, unknown>) =>
    jobSchema.parse({
      name: 'j',
      unit: 'hour',
      source: source ?? { connection: 'warehouse', query: 'select 1' },
      target: { kind: 's3', connection: 'lake', ...target },
      write_mode: 'overwrite-partition',
    });
  const hours = partitionRange({ from: '2026-01-20T19', to: '2026-01-20T21' }, 'hour', 'UTC');

  it('refuses raw backfill data in the automated prefix, naming the prefix, path and marker to use', () => {
    const reasons = automatedPrefixRefusals(
      job({ path: 'P/P_{date}_{hour}', prefix: 'P/', backfill_prefix: 'P-backfill/' }),
      hours,
      config,
    );
    expect(reasons).toEqual([
      'the target would write raw backfill data into the automated prefix s3://amplitude-raw-bucket/P/ (target.prefix), e.g. s3://amplitude-raw-bucket/P/P_2026-01-20_19…; ' +
        'the daily ETL reads that prefix and would process these objects again, duplicating records downstream. ' +
        'Write them under the backfill prefix s3://amplitude-raw-bucket/P-backfill/ instead: set target.path to "P-backfill/P-backfill_{date}_{hour}", ' +
        'e.g. s3://amplitude-raw-bucket/P-backfill/P-backfill_2026-01-20_19#0.json.gz with its …_19_complete marker',
    ]);
  });

  it('protects a prefix the S3 source declares in the same bucket', () => {
    const reasons = automatedPrefixRefusals(
      job({ path: 'P/again_{date}_{hour}' }, { kind: 's3', connection: 'lake', path: 'P/P_{date}_{hour}', prefix: 'P/' }),
      hours,
      config,
    );
    expect(reasons[0]).toContain('into the automated prefix s3://amplitude-raw-bucket/P/ (source.prefix)');
  });

  it.each([
    ['the backfill prefix', { path: 'P-backfill/P-backfill_{date}_{hour}', prefix: 'P/', backfill_prefix: 'P-backfill/' }],
    ['a refined location', { path: 'refined/event/dt={date}/hour={hour}/' }],
  ])('lets %s through', (_name, target) => {
    expect(automatedPrefixRefusals(job(target), hours, config)).toEqual([]);
  });

  it.each([
    ['P/P_{date}_{hour}', 'P/', 'P-backfill/', 'P-backfill/P-backfill_{date}_{hour}'],
    ['raw/events/x_{date}', 'raw/events/', 'raw/events-backfill/', 'raw/events-backfill/x_{date}'],
    ['raw/{date}/', 'raw/', 'raw-backfill/', 'raw-backfill/{date}/'],
  ])('suggests %s → under %s', (path, automated, backfill, suggested) => {
    expect(suggestedPath(path, automated, backfill)).toBe(suggested);
  });
});

describe('S3 errors', () => {
  const aws = (name: string, status: number, extra: Record<string, unknown> = {}) =>
    Object.assign(new Error(`${name} message`), { name, $metadata: { httpStatusCode: status }, ...extra });
  it.each([
    [aws('SlowDown', 503), true],
    [aws('InternalError', 500), true],
    [aws('ServiceUnavailable', 503), true],
    [Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), true],
    [new Error('socket hang up'), true],
    [new Error('wrapped', { cause: Object.assign(new Error('unexpected end of file'), { code: 'Z_BUF_ERROR' }) }), true],
    [aws('NoSuchBucket', 404), false],
    [aws('AccessDenied', 403), false],
    [new Error('a bug'), false],
  ])('%s is transient: %s', (err, transient) => {
    expect(isTransientS3Error(err)).toBe(transient);
  });

  it('says what went wrong, where, and what to do', () => {
    expect(describeS3Error(aws('NoSuchBucket', 404, { Code: 'NoSuchBucket' }), 's3://b/k')).toBe(
      'S3 NoSuchBucket (404) on s3://b/k: NoSuchBucket message — check the bucket in the connection',
    );
  });
});

describe('streaming helpers', () => {
  it('splits a byte stream into its non-blank lines, wherever the chunks break', async () => {
    const text = '{"a":1}\r\n\n{"b":"ü"}\n  \n{"c":3}';
    const bytes = Buffer.from(text);
    const chunks = [bytes.subarray(0, 5), bytes.subarray(5, 13), bytes.subarray(13, 14), bytes.subarray(14)];
    const out: string[] = [];
    for await (const l of lines(Readable.from(chunks))) out.push(l);
    expect(out).toEqual(['{"a":1}', '{"b":"ü"}', '{"c":3}']);
  });

  it('turns COPY text into blocks of whole records, one line per record joined by RS, undoing the doubled backslashes, wherever the chunks break', async () => {
    // as COPY … TO STDOUT sends JSON text: every backslash doubled
    const rows = ['{"a":"ü\\\\n"}', '{"b":"\\\\\\\\"}', '{"c":"é€"}', '{"d":4}', '{"e":"\\\\\\\\\\\\"}'];
    // the server joins records into COPY rows with RS (0x1e): here the first two, and the last three
    const bytes = Buffer.from(`${rows[0]}\x1e${rows[1]}\n${rows[2]}\x1e${rows[3]}\x1e${rows[4]}\n`);
    for (let size = 1; size <= bytes.length; size++) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
      const blocks = [];
      for await (const b of copyBlocks(Readable.from(chunks))) blocks.push(b);
      expect(blocks.every((b) => b.data.at(-1) === 0x0a && countLines(b.data) === b.count)).toBe(true);
      expect(Buffer.concat(blocks.map((b) => b.data)).toString()).toBe('{"a":"ü\\n"}\n{"b":"\\\\"}\n{"c":"é€"}\n{"d":4}\n{"e":"\\\\\\"}\n');
      expect(blocks.reduce((n, b) => n + b.count, 0)).toBe(5);
    }
  });

  it('gathers records into blocks and finds where a block splits between objects', async () => {
    const blocks = [];
    for await (const b of blocksOf(Readable.from(Array.from({ length: 30_000 }, (_, i) => `{"n":${i}}`)))) blocks.push(b);
    expect(blocks.length).toBeGreaterThan(1);
    expect(blocks.reduce((n, b) => n + b.count, 0)).toBe(30_000);
    expect(
      Buffer.concat(blocks.map((b) => b.data))
        .toString()
        .split('\n')
        .slice(0, -1)
        .map((l) => (JSON.parse(l) as { n: number }).n),
    ).toEqual(Array.from({ length: 30_000 }, (_, i) => i));
    const text = Buffer.from('a\nbb\nccc\n');
    expect([1, 2, 3].map((n) => endOfLine(text, n))).toEqual([1, 4, 8]);
    expect(countLines(text)).toBe(3);
  });

  it('mapLimit keeps order, bounds concurrency and reports the first failure', async () => {
    let inFlight = 0;
    let most = 0;
    const result = await mapLimit([5, 1, 3, 2, 4], 2, async (n) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, n));
      inFlight -= 1;
      return n * 10;
    });
    expect(result).toEqual([50, 10, 30, 20, 40]);
    expect(most).toBe(2);
    await expect(mapLimit([1, 2, 3], 2, (n) => (n === 2 ? Promise.reject(new Error('two')) : Promise.resolve(n)))).rejects.toThrow('two');
  });
});
