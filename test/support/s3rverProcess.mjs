// Runs s3rver (a real S3 API server on loopback) in its own process:
//   node --openssl-legacy-provider test/support/s3rverProcess.mjs <directory>
// prints {"port":N} once listening and stops on SIGTERM.
//
// **Important**: s3rver 3.7 encrypts ListObjectsV2 continuation tokens with DES, which
// OpenSSL 3 only offers through its legacy provider: without the flag, every listing longer
// than one page (1,000 keys) fails with InternalError. Hence a process of its own.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import S3rver from 's3rver';

const directory = process.argv[2];
if (!directory) throw new Error('usage: s3rverProcess.mjs <directory>');

/**
 * s3rver 3.7 answers AbortMultipartUpload with MethodNotAllowed. This adds it, as S3 does it:
 * 204 and the upload's parts gone, or 404 NoSuchUpload. Nothing else is changed.
 */
async function abortMultipart(ctx, next) {
  if (ctx.method !== 'DELETE' || typeof ctx.query.uploadId !== 'string') return next();
  const bucket = ctx.path.split('/')[1] ?? '';
  const dir = join(directory, bucket, '._S3rver_uploads', ctx.query.uploadId);
  if (!/^[A-Za-z0-9._-]+$/.test(ctx.query.uploadId) || !existsSync(dir)) {
    ctx.status = 404;
    ctx.type = 'application/xml';
    ctx.body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>';
    return;
  }
  rmSync(dir, { recursive: true, force: true });
  ctx.status = 204;
}

const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
server.middleware.unshift(abortMultipart);
const address = await server.run();
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
process.on('SIGTERM', () => {
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
