// Runs s3rver (an S3 API server on loopback) in a process of its own, for the sandbox's lake
// and for the tests:
//   node --openssl-legacy-provider s3rverProcess.mjs <directory> [port]
// prints {"port":N} once listening; stops on SIGTERM/SIGINT, and by itself when the process
// that started it is gone (a SIGKILLed sandbox must not leave its S3 server behind).
// Plain JavaScript on purpose: it is started by a bare `node`, from the sources and from builds.
//
// **Important**: s3rver 3.7 encrypts ListObjectsV2 continuation tokens with DES, which
// OpenSSL 3 only offers through its legacy provider: without the flag, every listing longer
// than one page (1,000 keys) fails with InternalError. Hence a process of its own.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setInterval } from 'node:timers';
import S3rver from 's3rver';

const [directory, portArg] = process.argv.slice(2);
if (!directory) throw new Error('usage: s3rverProcess.mjs <directory> [port]');
mkdirSync(directory, { recursive: true });

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
    ctx.body =
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>';
    return;
  }
  rmSync(dir, { recursive: true, force: true });
  ctx.status = 204;
}

const server = new S3rver({ address: '127.0.0.1', port: portArg ? Number(portArg) : 0, silent: true, directory });
server.middleware.unshift(abortMultipart);
const address = await server.run();
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
const parent = process.ppid;
setInterval(() => {
  try {
    process.kill(parent, 0);
  } catch {
    stop();
  }
}, 1000).unref();
