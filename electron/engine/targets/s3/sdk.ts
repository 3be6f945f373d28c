/**
 * The AWS SDK, loaded the first time an S3 connection is used. Loading it costs about 0.4 s,
 * which every `run-backfill` start would pay otherwise — Postgres-only runs included, and the
 * crash-safety trials start the command hundreds of times. Types come from `import type`.
 */
import { createRequire } from 'node:module';
import type * as ClientS3 from '@aws-sdk/client-s3';

const require = createRequire(import.meta.url);
let clientS3: typeof ClientS3 | undefined;

export function s3Sdk(): typeof ClientS3 {
  clientS3 ??= require('@aws-sdk/client-s3') as typeof ClientS3;
  return clientS3;
}
