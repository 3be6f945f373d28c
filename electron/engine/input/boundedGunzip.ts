/**
 * Decompressing untrusted gzip with a cap. **Important**: never `gunzipSync` here — a 3 MB
 * archive can hold gigabytes of zeros, and the synchronous call inflates all of it before
 * anything can look at the size. The stream is stopped as soon as the output passes the
 * limit, so at most the limit plus one chunk is ever held.
 */
import { createGunzip } from 'node:zlib';
import { InputError } from '../../../shared/errors.ts';
import { overLimitError } from '../../../shared/limits.ts';

export interface BoundedGunzip {
  file: string;
  /** What the decompressed data is, for the message. */
  what: string;
  limit: number;
}

export function gunzipBounded(data: Buffer, bound: BoundedGunzip): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const gunzip = createGunzip();
    const chunks: Buffer[] = [];
    let length = 0;
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      gunzip.destroy();
      reject(err);
    };
    gunzip.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > bound.limit) {
        fail(overLimitError({ file: bound.file, what: bound.what, size: length, atLeast: true, limit: bound.limit, unit: 'bytes' }));
        return;
      }
      chunks.push(chunk);
    });
    gunzip.on('error', (err) =>
      fail(new InputError(`${bound.file} is not a run archive: its gzip data is damaged (${err.message})`, { file: bound.file })),
    );
    gunzip.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks, length));
    });
    gunzip.end(data);
  });
}
