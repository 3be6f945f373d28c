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
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { URLSearchParams } from 'node:url';
import { dirname, join, resolve, sep } from 'node:path';
import { setInterval } from 'node:timers';
import S3rver from 's3rver';

const require = createRequire(import.meta.url);
const FilesystemStore = require('s3rver/lib/stores/filesystem');

// **Hazard**: read the parent before anything awaits. Read after the server is up, a parent
// killed the moment it saw the port line is already gone: the orphan's parent is then init
// (or a subreaper), which never goes away, and the server would outlive everything.
const parent = process.ppid;

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

function xmlError(ctx, status, code, message) {
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
}

/**
 * **Important**: s3rver stores an object at path.join(directory, bucket, ...key segments), so a
 * key with a `..` segment (or a backslash, which some platforms read as a separator) is
 * written outside its folder. S3 would store such a key as an opaque name; here it is refused
 * (400 InvalidArgument) before s3rver sees it, and so is any key whose file would not lie under
 * the server's folder.
 */
async function refuseTraversal(ctx, next) {
  let path;
  try {
    path = decodeURIComponent(ctx.path);
  } catch {
    return xmlError(ctx, 400, 'InvalidURI', 'Could not parse the specified URI.');
  }
  const segments = path.split('/').slice(1);
  const bad = segments.some((s) => s === '.' || s === '..') || path.includes('\\');
  const copySource = ctx.headers['x-amz-copy-source'];
  let badCopy = false;
  if (typeof copySource === 'string') {
    let decoded = copySource;
    try {
      decoded = decodeURIComponent(copySource);
    } catch {
      badCopy = true;
    }
    badCopy ||= decoded.split('/').some((s) => s === '.' || s === '..') || decoded.includes('\\');
  }
  const outside = !resolve(directory, ...segments).startsWith(resolve(directory) + sep) && segments.some((s) => s !== '');
  if (bad || badCopy || outside)
    return xmlError(ctx, 400, 'InvalidArgument', 'Keys with "." or ".." segments or backslashes are refused by this server.');
  return next();
}

/** x-amz-tagging (`k=v&k2=v2`) as s3rver's stored tagging document. */
function taggingXml(header) {
  const esc = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const tags = [...new URLSearchParams(header)].map(([k, v]) => `<Tag><Key>${esc(k)}</Key><Value>${esc(v)}</Value></Tag>`);
  return `<Tagging><TagSet>${tags.join('')}</TagSet></Tagging>`;
}

function taggingFile(bucket, key) {
  return new FilesystemStore(directory).getResourcePath(bucket, key, 'tagging.xml');
}

function writeTags(bucket, key, xml) {
  const file = taggingFile(bucket, key);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, xml);
}

/**
 * Object tags as S3 keeps them, which s3rver 3.7 does not: the x-amz-tagging header of a
 * PutObject or CreateMultipartUpload tags the object it creates, and CopyObject copies the
 * source's tags unless x-amz-tagging-directive is REPLACE. (GetObjectTagging and
 * PutObjectTagging are s3rver's own.) Snapshots and restores rely on the copy keeping them.
 */
const pendingUploadTags = new Map();
async function objectTags(ctx, next) {
  const [, bucket = '', ...rest] = decodeURIComponent(ctx.path).split('/');
  const key = rest.join('/');
  const q = ctx.query;
  const tagging = ctx.headers['x-amz-tagging'];
  await next();
  if (ctx.status >= 300 || key === '' || 'tagging' in q) return;
  if (ctx.method === 'POST' && 'uploads' in q && typeof tagging === 'string') {
    const id = /<UploadId>([^<]+)<\/UploadId>/.exec(String(ctx.body))?.[1];
    if (id) pendingUploadTags.set(id, taggingXml(tagging));
  } else if (ctx.method === 'POST' && typeof q.uploadId === 'string') {
    const xml = pendingUploadTags.get(q.uploadId);
    pendingUploadTags.delete(q.uploadId);
    if (xml) writeTags(bucket, key, xml);
  } else if (ctx.method === 'PUT' && q.uploadId === undefined) {
    const source = ctx.headers['x-amz-copy-source'];
    if (typeof source === 'string' && ctx.headers['x-amz-tagging-directive'] !== 'REPLACE') {
      const [srcBucket = '', ...srcKey] = decodeURI(source).replace(/^\//, '').split('/');
      const from = taggingFile(srcBucket, srcKey.join('/'));
      if (existsSync(from)) writeTags(bucket, key, readFileSync(from));
      else rmSync(taggingFile(bucket, key), { force: true });
    } else if (typeof tagging === 'string') writeTags(bucket, key, taggingXml(tagging));
    else rmSync(taggingFile(bucket, key), { force: true });
  } else if (ctx.method === 'DELETE' && q.uploadId === undefined) {
    rmSync(taggingFile(bucket, key), { force: true });
  }
}

const server = new S3rver({ address: '127.0.0.1', port: portArg ? Number(portArg) : 0, silent: true, directory });
server.middleware.unshift(abortMultipart);
server.middleware.unshift(objectTags);
server.middleware.unshift(refuseTraversal);
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
setInterval(() => {
  // reparented (process.ppid is read live) means the parent is gone, even if its pid was reused
  if (process.ppid !== parent) return stop();
  try {
    process.kill(parent, 0);
  } catch {
    stop();
  }
}, 1000).unref();
