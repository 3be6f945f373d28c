/**
 * An S3 client for one connection. With the rest of targets/s3 this is the only code that
 * imports the AWS SDK.
 *
 * Retries: the SDK's standard mode retries 500/502/503/504, throttling (SlowDown) and dropped
 * connections (ECONNRESET, timeouts) with exponential backoff and full jitter, for every
 * request whose body can be sent again — listings, reads, small PUTs, copies, deletes and each
 * part of a multipart upload. What it cannot repeat (a response body cut mid-stream) fails the
 * partition attempt, which the executor retries with its own backoff.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { InputError } from '../../../../shared/errors.ts';
import type { S3Connection } from '../../../../shared/schemas.ts';
import { s3Sdk } from './sdk.ts';

export interface S3Endpoint {
  name: string;
  connection: S3Connection;
  /** From the environment variables the connection names; undefined: the AWS default chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** no_sign_request: requests go out without an Authorization header */
  unsigned?: boolean;
}

/** Requests in flight at once per connection: parts of an upload, copies of a snapshot. */
export const DEFAULT_S3_CONCURRENCY = 8;
export const MAX_ATTEMPTS = 6;

/** Reads the connection's credentials from the environment; never from files. */
export function s3Endpoint(name: string, connection: S3Connection, env: NodeJS.ProcessEnv): S3Endpoint {
  const idVar = connection.access_key_id_env;
  const secretVar = connection.secret_access_key_env;
  if ((idVar === undefined) !== (secretVar === undefined)) {
    const missing = idVar === undefined ? 'access_key_id_env' : 'secret_access_key_env';
    throw new InputError(
      `connection "${name}" names one credential variable but not ${missing}: give both, or neither to use the AWS default chain`,
      {
        field: `connections.${name}.${missing}`,
      },
    );
  }
  if (connection.no_sign_request) {
    if (idVar !== undefined) {
      throw new InputError(
        `connection "${name}" sets no_sign_request and also names credential variables: requests are either signed or not`,
        {
          field: `connections.${name}.no_sign_request`,
          value: true,
          hint: 'remove no_sign_request, or access_key_id_env and secret_access_key_env',
        },
      );
    }
    return { name, connection, unsigned: true };
  }
  if (idVar === undefined || secretVar === undefined) return { name, connection };
  for (const [field, variable] of [
    ['access_key_id_env', idVar],
    ['secret_access_key_env', secretVar],
  ] as const) {
    if (env[variable] === undefined || env[variable] === '') {
      throw new InputError(
        `connection "${name}" takes its ${field === 'access_key_id_env' ? 'access key id' : 'secret access key'} from the environment variable ${variable}, which is not set`,
        {
          field: `connections.${name}.${field}`,
          value: variable,
          hint: `export ${variable}=… before running`,
        },
      );
    }
  }
  return { name, connection, credentials: { accessKeyId: env[idVar] ?? '', secretAccessKey: env[secretVar] ?? '' } };
}

export function createS3Client(endpoint: S3Endpoint, concurrency: number): S3Client {
  const client = newClient(endpoint, concurrency);
  if (endpoint.unsigned) unsignedRequests(client);
  return client;
}

/** Removes what signing added, after it, on every attempt: S3 then treats the request as anonymous. */
function unsignedRequests(client: S3Client): void {
  // The deserialize step wraps the HTTP handler itself: it sees each attempt's request after
  // the finalizeRequest step (retries, signing) has built it, just before it is sent.
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> };
      for (const header of Object.keys(request.headers ?? {})) {
        if (/^(authorization|x-amz-security-token)$/i.test(header)) delete request.headers?.[header];
      }
      return next(args);
    },
    { step: 'deserialize', priority: 'low', name: 'backfillRunbookUnsigned' },
  );
}

function newClient(endpoint: S3Endpoint, concurrency: number): S3Client {
  // The SDK warns on every start under Node < 22 about its own future support; an operator
  // can do nothing about it and it would bury run-backfill's own messages on stderr.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { connection } = endpoint;
  return new (s3Sdk().S3Client)({
    region: connection.region,
    ...(connection.endpoint !== undefined ? { endpoint: connection.endpoint } : {}),
    forcePathStyle: connection.force_path_style,
    ...(endpoint.credentials ? { credentials: endpoint.credentials } : {}),
    // Unsigned: the SDK insists on signing, so it signs with a throwaway key and the header is
    // dropped right after (unsignedRequests below) — nothing secret is ever involved.
    ...(endpoint.unsigned ? { credentials: { accessKeyId: 'unsigned', secretAccessKey: 'unsigned' } } : {}),
    maxAttempts: MAX_ATTEMPTS,
    retryMode: 'standard',
    // The SDK would print its own warnings on the console (a failed streamed body, which
    // bucket.ts retries itself): run-backfill reports failures in its own words.
    logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    // S3-compatible servers often reject the SDK's newer default checksum trailers; object
    // integrity is checked by size after upload and by sha256 in the manifest instead.
    ...(connection.endpoint !== undefined
      ? { requestChecksumCalculation: 'WHEN_REQUIRED' as const, responseChecksumValidation: 'WHEN_REQUIRED' as const }
      : {}),
    requestHandler: {
      connectionTimeout: 10_000,
      // no answer for this long on an open socket: treat the connection as dead and retry
      socketTimeout: 120_000,
      httpAgent: { keepAlive: true, maxSockets: concurrency + 2 },
      httpsAgent: { keepAlive: true, maxSockets: concurrency + 2 },
    },
  });
}
