/**
 * The AWS SDK, loaded the first time an S3 connection is used. Loading it costs about 0.15 s,
 * which every `run-backfill` start would pay otherwise — Postgres-only runs included, and the
 * crash-safety trials start the command hundreds of times. Types come from `import type`. The
 * built command takes it from its own bundle, compiled from a code cache (vendored.ts).
 */
import type * as ClientS3 from '@aws-sdk/client-s3';
import { vendored } from '../../vendored.ts';

export function s3Sdk(): typeof ClientS3 {
  return vendored<typeof ClientS3>('@aws-sdk/client-s3');
}
