// Reads the files users write (config, jobs, plans). Every failure is an InputError whose
// message names the file, the field (dotted path) and the value, and says what to do next.
// Values from these files are data only: nothing here executes or interpolates them.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { InputError, showValue } from '../../../shared/errors.ts';
import { LIMITS } from '../../../shared/limits.ts';
import { readBoundedText } from '../input/boundedFile.ts';
import { EMPTY, parseBoundedYaml } from '../input/boundedYaml.ts';
import { configSchema, JOB_NAME, jobSchema, planSchema, redactUrl, type Config, type Job, type Plan } from '../../../shared/schemas.ts';

type What = 'job' | 'plan' | 'config';

const NOT_FOUND_HINT: Record<What, string> = {
  config: 'pass --config FILE or run `run-backfill sandbox up`',
  job: 'check the name and the --jobs folder',
  plan: 'check the path given to --plan',
};

const REQUIRED: Record<What, string> = {
  config: 'connections',
  job: 'name, unit, source, target and write_mode',
  plan: 'request_id, job, range and write_mode',
};

const FILE_WORD: Record<What, string> = { job: 'job file', plan: 'plan file', config: 'config file' };

export function parseYamlFile<T>(file: string, schema: z.ZodType<T>, what: What): T {
  let text: string;
  try {
    text = readBoundedText(file, { what: FILE_WORD[what], limit: LIMITS.yamlFileBytes });
  } catch (error) {
    if (error instanceof InputError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new InputError(`${what} file ${file} not found: ${NOT_FOUND_HINT[what]}`, { file, hint: NOT_FOUND_HINT[what] });
    if (code === 'EISDIR') throw new InputError(`${what} file ${file} is a folder, not a YAML file`, { file });
    throw new InputError(`${what} file ${file} cannot be read: ${(error as Error).message}`, { file });
  }
  const data = parseBoundedYaml(text, file, FILE_WORD[what]);
  if (data === EMPTY) throw new InputError(`${file} is empty: a ${what} file needs at least ${REQUIRED[what]}`, { file });

  const result = schema.safeParse(data);
  if (result.success) return result.data;
  const issues = result.error.issues;
  // A misspelt field shows up twice: as a missing field and as an unknown one. The unknown one,
  // with its "did you mean", is the one that tells the user what to fix, so it goes first.
  const explained = issues.map((issue) => describeIssue(issue, data, schema));
  const index = Math.max(
    0,
    explained.findIndex((d) => d.suggested),
  );
  const described = explained[index];
  if (!described) throw new InputError(`${file}: not a valid ${what} file`, { file });
  const others = issues.length - 1;
  // A password in a connection URL is refused by the schema; it must not leak through the error either.
  const value = typeof described.value === 'string' ? redactUrl(described.value) : described.value;
  const more = others === 0 ? '' : ` (and ${others} more problem${others === 1 ? '' : 's'})`;
  throw new InputError(`${file}: ${described.message}${more}`, { file, field: described.field, value });
}

export function loadConfig(file: string): Config {
  return parseYamlFile(file, configSchema, 'config');
}

export function loadPlan(file: string): Plan {
  return parseYamlFile(file, planSchema, 'plan');
}

/** Job names in a folder: files named <name>.yaml or <name>.yml whose name is a valid job name, sorted. */
export function findJobs(jobsDir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(jobsDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new InputError(`jobs folder ${jobsDir} not found: pass --jobs DIR`, { file: jobsDir, hint: 'pass --jobs DIR' });
    if (code === 'ENOTDIR') throw new InputError(`jobs folder ${jobsDir} is a file, not a folder: pass --jobs DIR`, { file: jobsDir });
    throw new InputError(`jobs folder ${jobsDir} cannot be read: ${(error as Error).message}`, { file: jobsDir });
  }
  const names = entries
    .map((entry) => /^(.*)\.ya?ml$/.exec(entry)?.[1])
    .filter((name): name is string => name !== undefined && JOB_NAME.test(name));
  return [...new Set(names)].sort();
}

export function loadJob(jobsDir: string, name: string, config?: Config): { job: Job; file: string } {
  if (!JOB_NAME.test(name)) {
    throw new InputError(
      `job name ${showValue(name)} is not valid: use lowercase letters, digits, ".", "_" or "-", starting with a letter or digit`,
      {
        field: 'job',
        value: name,
      },
    );
  }
  const available = findJobs(jobsDir);
  if (!available.includes(name)) {
    const guess = closest(name, available);
    const list = available.length > 0 ? `jobs available there: ${available.join(', ')}` : 'that folder has no job files (<name>.yaml)';
    throw new InputError(`job ${name} not found in ${jobsDir}${guess ? ` (did you mean ${guess}?)` : ''}: ${list}`, {
      field: 'job',
      value: name,
    });
  }
  const candidates = [`${name}.yaml`, `${name}.yml`].map((f) => path.join(jobsDir, f)).filter(isFile);
  if (candidates.length > 1)
    throw new InputError(`job ${name} is defined twice, in ${candidates.join(' and ')}: keep one`, { field: 'job', value: name });
  const file = candidates[0];
  if (file === undefined) throw new InputError(`job ${name} in ${jobsDir} is not a file`, { field: 'job', value: name });

  const job = parseYamlFile(file, jobSchema, 'job');
  if (job.name !== name) {
    throw new InputError(
      `${file}: field "name": ${showValue(job.name)} does not match the file name ${name}: rename the file or the job so they agree`,
      {
        file,
        field: 'name',
        value: job.name,
      },
    );
  }
  if (config) {
    const known = Object.keys(config.connections);
    for (const field of ['source.connection', 'target.connection'] as const) {
      const value = field === 'source.connection' ? job.source.connection : job.target.connection;
      if (!Object.hasOwn(config.connections, value)) {
        const guess = closest(value, known);
        const list = known.length > 0 ? `connections in the config: ${known.join(', ')}` : 'the config has no connections';
        throw new InputError(
          `${file}: field "${field}": ${showValue(value)} is not a connection in the config${guess ? ` (did you mean "${guess}"?)` : ''}; ${list}`,
          {
            file,
            field,
            value,
          },
        );
      }
    }
  }
  return { job, file };
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

// ---- turning a zod issue into one sentence ----

type Segment = PropertyKey;

function fieldName(segments: readonly Segment[]): string {
  return segments
    .map((s, i) =>
      typeof s === 'number'
        ? `[${s}]`
        : typeof s === 'string' && /^[A-Za-z0-9_-]+$/.test(s)
          ? `${i === 0 ? '' : '.'}${s}`
          : `[${JSON.stringify(String(s))}]`,
    )
    .join('');
}

function valueAt(data: unknown, segments: readonly Segment[]): unknown {
  let current = data;
  for (const s of segments) {
    if (current === null || typeof current !== 'object' || typeof s === 'symbol') return undefined;
    current = Object.hasOwn(current, s) ? (current as Record<string | number, unknown>)[s] : undefined;
  }
  return current;
}

function got(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'an empty value';
  if (typeof value === 'object') return 'a mapping';
  return showValue(typeof value === 'string' ? redactUrl(value) : value);
}

const EXPECTED: Record<string, string> = { int: 'an integer', object: 'a mapping', array: 'a list', record: 'a mapping' };

interface Described {
  message: string;
  field: string;
  value: unknown;
  /** an unknown field with a likely intended name */
  suggested?: boolean;
}

function describeIssue(issue: z.core.$ZodIssue, data: unknown, schema: z.ZodType): Described {
  const field = fieldName(issue.path);
  const value = valueAt(data, issue.path);
  const at = (text: string) => ({ message: `field "${field}": ${text}`, field, value });
  switch (issue.code) {
    case 'invalid_type': {
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      if (issue.path.length === 0) return { message: `expected a mapping of fields at the top level, got ${got(value)}`, field, value };
      if (value === undefined) return { message: `field "${field}" is missing (expected ${expected})`, field, value };
      if (value === null) return { message: `field "${field}" is empty (expected ${expected})`, field, value };
      return at(`expected ${expected}, got ${got(value)}`);
    }
    case 'unrecognized_keys': {
      const allowed = allowedKeys(schema, issue.path, data);
      const key = issue.keys[0] ?? '';
      const name = fieldName([...issue.path, key]);
      const guess = closest(key, allowed);
      const help = guess ? ` (did you mean "${guess}"?)` : allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : '';
      const extra = issue.keys.length > 1 ? ` and ${issue.keys.length - 1} more unknown field${issue.keys.length > 2 ? 's' : ''}` : '';
      return {
        message: `unknown field "${name}"${help}${extra}`,
        field: name,
        value: valueAt(data, [...issue.path, key]),
        suggested: guess !== undefined,
      };
    }
    case 'invalid_value': {
      const list = issue.values.map(String).join(', ');
      if (value === undefined || value === null)
        return { message: `field "${field}" is ${value === null ? 'empty' : 'missing'}: one of ${list}`, field, value };
      return at(`${got(value)} is not one of ${list}`);
    }
    case 'invalid_union': {
      const options = (issue as { options?: unknown[] }).options;
      if (!options) return at(issue.message);
      const list = options
        .filter((o) => o !== undefined)
        .map(String)
        .join(', ');
      if (value === undefined || value === null)
        return { message: `field "${field}" is ${value === null ? 'empty' : 'missing'}: one of ${list}`, field, value };
      return at(`${got(value)} is not one of ${list}`);
    }
    case 'too_small':
    case 'too_big':
      return at(`${boundText(issue)}, got ${got(value)}`);
    case 'invalid_key':
      return at(`the name ${got(issue.path[issue.path.length - 1])} ${issue.issues[0]?.message ?? 'is not allowed'}`);
    case 'invalid_format':
      return at(`${issue.message}, got ${got(value)}`);
    case 'custom':
    case 'not_multiple_of':
    case 'invalid_element':
      return at(issue.message);
  }
}

function boundText(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): string {
  const small = issue.code === 'too_small';
  const limit = Number(small ? issue.minimum : issue.maximum);
  if (issue.origin === 'string')
    return small && limit === 1 ? 'must not be empty' : `must be ${small ? 'at least' : 'at most'} ${limit} characters`;
  if (issue.origin === 'array') return `needs ${small ? 'at least' : 'at most'} ${limit} item${limit === 1 ? '' : 's'}`;
  if (small) return issue.inclusive === false ? `must be greater than ${limit}` : `must be at least ${limit}`;
  return issue.inclusive === false ? `must be less than ${limit}` : `must be at most ${limit}`;
}

/** The field names the schema allows at `segments`, following the data through unions. */
function allowedKeys(schema: z.ZodType, segments: readonly Segment[], data: unknown): string[] {
  let current: z.ZodType | undefined = schema;
  for (let i = 0; i <= segments.length && current; i++) {
    current = unwrap(current);
    if (current instanceof z.ZodDiscriminatedUnion) {
      const here = valueAt(data, segments.slice(0, i));
      const discriminator = current.def.discriminator;
      const tag = here !== null && typeof here === 'object' ? (here as Record<string, unknown>)[discriminator] : undefined;
      current = (current.options as z.ZodType[]).find((o) => {
        const option = unwrap(o);
        const literal: unknown = option instanceof z.ZodObject ? (option.shape as Record<string, unknown>)[discriminator] : undefined;
        // An optional discriminator (a job's Postgres source or target may leave out `kind`) matches its absence.
        if (literal instanceof z.ZodOptional)
          return (
            tag === undefined ||
            (literal.unwrap() instanceof z.ZodLiteral && (literal.unwrap() as z.ZodLiteral).values.has(tag as z.core.util.Literal))
          );
        return literal instanceof z.ZodLiteral && literal.values.has(tag as z.core.util.Literal);
      });
      if (!current) return [];
      current = unwrap(current);
    }
    if (i === segments.length) break;
    const s = segments[i];
    if (current instanceof z.ZodObject && typeof s === 'string') current = (current.shape as Record<string, z.ZodType>)[s];
    else if (current instanceof z.ZodArray) current = current.element as z.ZodType;
    else if (current instanceof z.ZodRecord) current = current.valueType as z.ZodType;
    else return [];
  }
  return current instanceof z.ZodObject ? Object.keys(current.shape) : [];
}

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  while (
    current instanceof z.ZodOptional ||
    current instanceof z.ZodDefault ||
    current instanceof z.ZodPrefault ||
    current instanceof z.ZodNullable
  ) {
    current = current.unwrap() as z.ZodType;
  }
  return current;
}

/** The candidate within a small edit distance of `word`, for "did you mean". */
function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(word.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/** Edits (insert, delete, replace, swap two neighbours) between a and b: "tabel" is one from "table". */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => d[i]?.[j] ?? Infinity;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(at(i, j), at(i - 2, j - 2) + 1);
    }
  }
  return at(a.length, b.length);
}
