/**
 * The AWS SDK, loaded the first time an S3 connection is used. Loading it costs about 0.4 s,
 * which every `run-backfill` start would pay otherwise — Postgres-only runs included, and the
 * crash-safety trials start the command hundreds of times. Types come from `import type`.
 */
import { createRequire } from 'node:module';
import type * as ClientS3 from '@aws-sdk/client-s3';
import type * as LibStorage from '@aws-sdk/lib-storage';

const require = createRequire(import.meta.url);
let clientS3: typeof ClientS3 | undefined;
let libStorage: typeof LibStorage | undefined;

export function s3Sdk(): typeof ClientS3 {
  clientS3 ??= require('@aws-sdk/client-s3') as typeof ClientS3;
  return clientS3;
}

export function storageSdk(): typeof LibStorage {
  libStorage ??= require('@aws-sdk/lib-storage') as typeof LibStorage;
  return libStorage;
}
