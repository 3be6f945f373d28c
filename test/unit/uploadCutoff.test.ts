/** BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF: up to it one PUT, above it a multipart upload (bucket.ts). */
import { describe, expect, it } from 'vitest';
import { uploadCutoff } from '../../electron/engine/targets/s3/bucket.ts';
import { InputError } from '../../shared/errors.ts';

const MiB = 1024 * 1024;

describe('the S3 upload cutoff', () => {
  it('is 32 MiB when the variable is unset or empty', () => {
    expect(uploadCutoff({})).toBe(32 * MiB);
    expect(uploadCutoff({ BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF: '  ' })).toBe(32 * MiB);
  });

  it('takes a size in bytes, kept between the 8 MiB part size and S3’s 5 GiB limit for one PUT', () => {
    expect(uploadCutoff({ BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF: String(100 * MiB) })).toBe(100 * MiB);
    expect(uploadCutoff({ BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF: '0' })).toBe(8 * MiB);
    expect(uploadCutoff({ BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF: '99999999999999' })).toBe(5 * 1024 * MiB);
  });

  it('refuses anything but a whole number of bytes, naming the variable and the value', () => {
    for (const bad of ['32MiB', '-1', '1e9', '3.5']) {
      let err: unknown;
      try {
        uploadCutoff({ BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF: bad });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InputError);
      expect((err as Error).message).toContain('BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF');
      expect((err as Error).message).toContain(JSON.stringify(bad));
    }
  });
});
