/**
 * What an S3 failure means: retry (the server was busy or the connection dropped) or stop and
 * tell the operator (no such bucket, access denied), and how to say it in one line.
 */

/** Error codes S3 (and S3-compatible servers) answer when trying again later may well work. */
const TRANSIENT_CODES = new Set([
  'SlowDown',
  'ServiceUnavailable',
  'InternalError',
  'RequestTimeout',
  'RequestTimeoutException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'TimeoutError',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNREFUSED',
  'EAI_AGAIN',
  'ERR_STREAM_PREMATURE_CLOSE',
  // a gzip stream cut short by a dropped connection
  'Z_BUF_ERROR',
]);

const TRANSIENT_MESSAGES = ['socket hang up', 'Premature close', 'unexpected end of file', 'aborted', 'other side closed'];

interface S3ErrorFields {
  name?: string;
  code?: string;
  message: string;
  status?: number;
  retryable: boolean;
}

function fieldsOf(err: unknown): S3ErrorFields {
  if (typeof err !== 'object' || err === null) return { message: String(err), retryable: false };
  const e = err as {
    name?: unknown;
    code?: unknown;
    Code?: unknown;
    message?: unknown;
    $metadata?: { httpStatusCode?: unknown };
    $retryable?: unknown;
    $response?: { statusCode?: unknown };
  };
  const status = e.$metadata?.httpStatusCode ?? e.$response?.statusCode;
  return {
    name: typeof e.name === 'string' ? e.name : undefined,
    code: typeof e.code === 'string' ? e.code : typeof e.Code === 'string' ? e.Code : undefined,
    message: typeof e.message === 'string' ? e.message : JSON.stringify(err),
    status: typeof status === 'number' ? status : undefined,
    retryable: e.$retryable !== undefined && e.$retryable !== null,
  };
}

function chain(err: unknown): unknown[] {
  const seen: unknown[] = [];
  const visit = (e: unknown): void => {
    if (e === undefined || e === null || seen.includes(e) || seen.length > 10) return;
    seen.push(e);
    if (e instanceof AggregateError) for (const inner of e.errors) visit(inner);
    if (e instanceof Error) visit(e.cause);
  };
  visit(err);
  return seen;
}

export function isTransientS3Error(err: unknown): boolean {
  return chain(err).some((e) => {
    const f = fieldsOf(e);
    if (f.retryable) return true;
    if ((f.name !== undefined && TRANSIENT_CODES.has(f.name)) || (f.code !== undefined && TRANSIENT_CODES.has(f.code))) return true;
    if (f.status !== undefined && (f.status >= 500 || f.status === 429)) return true;
    return TRANSIENT_MESSAGES.some((m) => f.message.includes(m));
  });
}

/** The S3 error code (NoSuchKey, AccessDenied, …) or HTTP status of a failure, if it has one. */
export function s3ErrorCode(err: unknown): string | undefined {
  const f = fieldsOf(err);
  return (
    f.code ?? (f.name !== undefined && f.name !== 'Error' ? f.name : undefined) ?? (f.status !== undefined ? String(f.status) : undefined)
  );
}

export function isNotFound(err: unknown): boolean {
  const f = fieldsOf(err);
  return f.status === 404 || f.name === 'NoSuchKey' || f.name === 'NotFound' || f.code === 'NoSuchKey';
}

const ADVICE: Readonly<Record<string, string>> = {
  NoSuchBucket: 'check the bucket in the connection',
  AccessDenied: 'check the credentials and the bucket policy: the role needs s3:ListBucket, s3:GetObject, s3:PutObject and s3:DeleteObject',
  InvalidAccessKeyId: 'check the access key in the environment variable named by access_key_id_env',
  SignatureDoesNotMatch: 'check the secret key in the environment variable named by secret_access_key_env',
  PermanentRedirect: 'the bucket is in another region: set region in the connection',
  AuthorizationHeaderMalformed: 'the bucket is in another region: set region in the connection',
  ECONNREFUSED: 'is the S3 endpoint running and is endpoint right in the connection?',
  ENOTFOUND: 'check the endpoint host in the connection',
  CredentialsProviderError:
    'no credentials found: set access_key_id_env and secret_access_key_env in the connection, or configure the AWS default chain (AWS_PROFILE, instance role)',
};

/** `S3 NoSuchBucket (404) on s3://b/k: The specified bucket does not exist — check the bucket in the connection` */
export function describeS3Error(err: unknown, where: string): string {
  const found = chain(err).map(fieldsOf);
  const f = found.find((x) => x.code !== undefined || x.status !== undefined) ?? found[0] ?? { message: String(err), retryable: false };
  const code = f.code ?? (f.name !== 'Error' ? f.name : undefined);
  const status = f.status !== undefined ? ` (${f.status})` : '';
  const advice = code !== undefined ? ADVICE[code] : undefined;
  return `S3 ${code ?? 'error'}${status} on ${where}: ${f.message}${advice ? ` — ${advice}` : ''}`;
}
