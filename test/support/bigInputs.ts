/**
 * Inputs at and past the limits of shared/limits.ts, for the size-limit tests and for
 * `npm run bench` (bench/limits.ts): the largest job file that is still accepted, files one
 * step over each limit, and the bombs that used to freeze the app or abort the CLI.
 */
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { Lexer } from 'yaml';
import { LIMITS, MiB } from '../../shared/limits.ts';
import { orderMartJob } from './workspace.ts';

export const yamlTokens = (text: string): number => {
  let n = 0;
  for (const _ of new Lexer().lex(text)) n += 1;
  return n;
};

/**
 * A valid job with as many tokens as the limit allows, of the shape the parser is slowest on
 * per token (measured: block lists of small flow mappings, e.g. validation rules).
 */
export function largestAcceptedJob(name = 'order-daily-mart'): string {
  const base = orderMartJob({ name });
  const rule = (i: number) => `  - { name: r${i}, source: select ${i} as rows, target: select ${i} as rows, tolerance: 0 }\n`;
  const perRule = yamlTokens(base + rule(1) + rule(2)) - yamlTokens(base + rule(1));
  const room = LIMITS.yamlTokens - yamlTokens(base);
  const lines: string[] = [];
  for (let i = 0; i < Math.floor(room / perRule) - 1; i++) lines.push(rule(i));
  let text = base.replace('validation:\n', `validation:\n${lines.join('')}`);
  while (yamlTokens(text) > LIMITS.yamlTokens || Buffer.byteLength(text) > LIMITS.yamlFileBytes) {
    lines.pop();
    text = base.replace('validation:\n', `validation:\n${lines.join('')}`);
  }
  return text;
}

/** The reported bomb's shape: a mapping of many short keys, `bytes` long. */
export function shortKeysYaml(bytes: number): string {
  const parts = ['name: big\nunit: day\nextra:\n'];
  let length = parts[0]?.length ?? 0;
  for (let i = 0; length < bytes; i++) {
    const line = `  k${i}: [a, b]\n`;
    parts.push(line);
    length += line.length;
  }
  return parts.join('');
}

/** Lists nested `depth` deep, flow style. */
export const deepFlowYaml = (depth: number): string => `name: deep\nextra: ${'['.repeat(depth)}${']'.repeat(depth)}\n`;

/** Mappings nested `depth` deep, block style (one more space per level). */
export function deepBlockYaml(depth: number): string {
  return `name: deep\nextra:\n${Array.from({ length: depth }, (_, i) => `${' '.repeat(i + 1)}k${i}:\n`).join('')}${' '.repeat(depth + 1)}leaf: 1\n`;
}

/** The "billion laughs": nine levels of ten aliases each. */
export function aliasBomb(): string {
  const level = (i: number) => String.fromCharCode(97 + i);
  return [
    `${level(0)}: &${level(0)} [x, x, x, x, x, x, x, x, x, x]`,
    ...Array.from(
      { length: 8 },
      (_, i) =>
        `${level(i + 1)}: &${level(i + 1)} [${Array(10)
          .fill(`*${level(i)}`)
          .join(', ')}]`,
    ),
    '',
  ].join('\n');
}

/** A file of `bytes` that takes no disk space (sparse), starting with `head`. */
export function sparseFile(file: string, bytes: number, head = ''): void {
  writeFileSync(file, head);
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, Buffer.from(' '), 0, 1, bytes - 1);
  } finally {
    closeSync(fd);
  }
}

/**
 * A gzip bomb as reported: about 3 MB on disk that inflates to about 3 GB of spaces inside a
 * JSON string. Built from repeated gzip members (one compressed once), so it costs nothing to make.
 */
export function gzipBomb(inflatedMiB = 3000): Buffer {
  const head = gzipSync(Buffer.from('{"format":"backfill-runbook/archive@1","bundle":"'));
  const member = gzipSync(Buffer.alloc(10 * MiB, 0x20), { level: 9 });
  return Buffer.concat([head, ...Array.from({ length: Math.ceil(inflatedMiB / 10) }, () => member), gzipSync(Buffer.from('"}'))]);
}

/** JSON nested `depth` deep. */
export const deepJson = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
