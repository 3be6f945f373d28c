/**
 * Reading a file a user names, never more than a limit. The size is checked before a byte is
 * read, and the read itself stops one byte past the limit, so a file that grows while it is
 * read, a FIFO or a device (`/dev/zero`) cannot make us hold more than the limit either.
 *
 * File-system failures (ENOENT, EISDIR, EACCES) are thrown as they are, so each caller keeps
 * its own wording for "not found"; only the size refusal is an InputError.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { overLimitError } from '../../../shared/limits.ts';

export interface BoundedRead {
  /** What the file is, for the message: "job file", "note bundle". */
  what: string;
  limit: number;
  field?: string;
  hint?: string;
}

export function readBoundedFile(file: string, bound: BoundedRead): Buffer {
  const fd = openSync(file, 'r');
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${file}'`), { code: 'EISDIR' });
    const refuse = (size: number, atLeast: boolean) =>
      overLimitError({ file, field: bound.field, what: bound.what, size, atLeast, limit: bound.limit, unit: 'bytes', hint: bound.hint });
    if (stat.isFile() && stat.size > bound.limit) throw refuse(stat.size, false);
    // Sized by the file, grown only for files whose size the stat does not tell (pipes, devices).
    const cap = bound.limit + 1;
    let buffer = Buffer.allocUnsafe(Math.min(cap, stat.isFile() ? stat.size + 1 : 64 * 1024));
    let length = 0;
    for (;;) {
      if (length === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(Math.min(cap, buffer.length * 2) - buffer.length)]);
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > bound.limit) throw refuse(length, true);
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** The same, as UTF-8 text. */
export function readBoundedText(file: string, bound: BoundedRead): string {
  return readBoundedFile(file, bound).toString('utf8');
}
