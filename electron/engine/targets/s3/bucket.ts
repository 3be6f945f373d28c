/**
 * One bucket through one S3 client: paginated listings, streaming reads, small PUTs, multipart
 * uploads streamed from local files, server-side copies and batched deletes, each with bounded
 * concurrency.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { s3Sdk } from './sdk.ts';
import { MAX_ATTEMPTS } from './client.ts';
import { mapLimit } from './concurrency.ts';
import { describeS3Error, isNotFound, isTransientS3Error, s3ErrorCode } from './errors.ts';
import { s3Url } from './paths.ts';
import { InputError } from '../../../../shared/errors.ts';
import { s3KeyProblem } from '../../../../shared/s3Keys.ts';

export interface ListedObject {
  key: string;
  size: number;
  etag: string;
  /** ISO time */
  lastModified?: string;
}

/** Tags and metadata an object is written with (S3 allows 10 tags; S3 keeps them across CopyObject). */
export interface ObjectLabelsArg {
  tags?: Record<string, string>;
  metadata?: Record<string, string>;
}

/** Small objects read whole (manifests, markers, snapshot manifests): anything larger is not one of ours. */
export const MAX_TEXT_OBJECT_BYTES = 64 * 1024 * 1024;

/** The last guard before a request: a key no layer rewrites (shared/s3Keys.ts), or a refusal. */
export function checkedKey(key: string): string {
  const problem = s3KeyProblem(key);
  if (problem !== undefined) throw new InputError(`the S3 key ${JSON.stringify(key)} ${problem}`, { value: key });
  return key;
}

/** `source=backfill&run_id=…`: the x-amz-tagging header's form. */
export function taggingHeader(tags: Record<string, string>): string {
  return Object.entries(tags)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

/** S3's floor for a part is 5 MiB; 8 MiB parts keep an upload of 10,000 parts at 80 GB. */
const PART_SIZE = 8 * 1024 * 1024;
/**
 * An object up to this size goes up in one PUT (documented in the README: S3 jobs). A multipart
 * upload costs three more round trips and, on most servers, a copy of the parts when it
 * completes: for a 10 MB object on the sandbox's server, 170–200 ms against 60–130 for one PUT.
 * Above it, parts go four at a time, which a large object needs on a slow link (rclone's
 * default cutoff is 200 MiB). Never beyond S3's 5 GiB limit for one PUT.
 */
export function uploadCutoff(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF?.trim() ?? '';
  if (text === '') return 32 * 1024 * 1024;
  if (!/^\d+$/.test(text)) {
    throw new InputError(`BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF is ${JSON.stringify(text)}: give a size in bytes, e.g. 33554432 for 32 MiB`, {
      field: 'BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF',
      value: text,
    });
  }
  return Math.min(5 * 1024 ** 3, Math.max(PART_SIZE, Number(text)));
}
const DELETE_BATCH = 1000;

type UploadListener = (uploadId: string) => void;

export class S3Bucket {
  /** The answer to the bucket check, kept while it is a yes (see check). */
  private checked: Promise<void> | undefined;
  private closed = false;

  constructor(
    readonly name: string,
    readonly client: S3Client,
    readonly concurrency: number,
  ) {}

  url(key: string): string {
    return s3Url(this.name, key);
  }

  /**
   * Throws with the reason when the bucket cannot be reached or read. Asked once per instance
   * while the answer is yes (a job whose source and target share a connection shares one
   * instance, checked once); a failure is asked again next time.
   */
  check(): Promise<void> {
    this.checked ??= this.client.send(new (s3Sdk().HeadBucketCommand)({ Bucket: this.name })).then(
      () => undefined,
      (err: unknown) => {
        this.checked = undefined;
        throw err;
      },
    );
    return this.checked;
  }

  /** Creates the bucket when it does not exist yet (the sandbox's lake; never used on a real target). */
  async ensureBucket(): Promise<void> {
    try {
      await this.check();
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.client.send(new (s3Sdk().CreateBucketCommand)({ Bucket: this.name }));
    }
  }

  /** Every object under `prefix`, page by page (ListObjectsV2 returns at most 1,000 a page). */
  async *list(prefix: string): AsyncGenerator<ListedObject> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new (s3Sdk().ListObjectsV2Command)({ Bucket: this.name, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) {
        if (o.Key !== undefined)
          yield {
            key: o.Key,
            size: o.Size ?? 0,
            etag: o.ETag ?? '',
            ...(o.LastModified ? { lastModified: o.LastModified.toISOString() } : {}),
          };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async listAll(prefix: string): Promise<ListedObject[]> {
    const all: ListedObject[] = [];
    for await (const o of this.list(prefix)) all.push(o);
    return all;
  }

  async head(key: string): Promise<{ size: number; etag: string } | null> {
    try {
      const r = await this.client.send(new (s3Sdk().HeadObjectCommand)({ Bucket: this.name, Key: key }));
      return { size: r.ContentLength ?? 0, etag: r.ETag ?? '' };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async getStream(key: string, signal?: AbortSignal): Promise<Readable> {
    return (await this.getObject(key, signal)).body;
  }

  /** The object's body as a stream, with the ETag of the version being read. */
  async getObject(key: string, signal?: AbortSignal): Promise<{ body: Readable; etag: string }> {
    const r = await this.client.send(new (s3Sdk().GetObjectCommand)({ Bucket: this.name, Key: key }), { abortSignal: signal });
    if (r.Body === undefined) throw new Error(`${this.url(key)}: GetObject returned no body`);
    return { body: r.Body as Readable, etag: r.ETag ?? '' };
  }

  /** A small object's text, or null when it does not exist. Refuses one over MAX_TEXT_OBJECT_BYTES unread. */
  async getText(key: string): Promise<string | null> {
    try {
      const r = await this.client.send(new (s3Sdk().GetObjectCommand)({ Bucket: this.name, Key: key }));
      if ((r.ContentLength ?? 0) > MAX_TEXT_OBJECT_BYTES) {
        (r.Body as Readable | undefined)?.destroy();
        throw new InputError(
          `${this.url(key)} holds ${r.ContentLength} bytes, more than the ${MAX_TEXT_OBJECT_BYTES} a manifest or marker may: it is not one of ours`,
          { value: key },
        );
      }
      return (await r.Body?.transformToString('utf8')) ?? '';
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async put(key: string, body: string | Buffer, contentType = 'application/json', labels: ObjectLabelsArg = {}): Promise<void> {
    await this.client.send(
      new (s3Sdk().PutObjectCommand)({
        Bucket: this.name,
        Key: checkedKey(key),
        Body: body,
        ContentType: contentType,
        ...(labels.tags ? { Tagging: taggingHeader(labels.tags) } : {}),
        ...(labels.metadata ? { Metadata: labels.metadata } : {}),
      }),
    );
  }

  async putTags(key: string, tags: Record<string, string>): Promise<void> {
    await this.client.send(
      new (s3Sdk().PutObjectTaggingCommand)({
        Bucket: this.name,
        Key: checkedKey(key),
        Tagging: { TagSet: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) },
      }),
    );
  }

  async getTags(key: string): Promise<Record<string, string>> {
    const r = await this.client.send(new (s3Sdk().GetObjectTaggingCommand)({ Bucket: this.name, Key: key }));
    return Object.fromEntries((r.TagSet ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
  }

  /** User metadata (x-amz-meta-*), or null when the object does not exist. */
  async getMetadata(key: string): Promise<Record<string, string> | null> {
    try {
      const r = await this.client.send(new (s3Sdk().HeadObjectCommand)({ Bucket: this.name, Key: key }));
      return r.Metadata ?? {};
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /**
   * Uploads a local file: one PUT when it is small, a multipart upload of up to four parts in
   * flight otherwise. `onUploadId` hears the multipart upload's id before any part is sent. On
   * failure the upload is aborted; if that abort fails too, the id recorded through
   * `onUploadId` lets the caller abort it later.
   *
   * Every request body is a stream of the file's own bytes (a range of it for a part), never a
   * copy in memory: an export's peak memory does not grow with its parts (bench (e), (j)). The
   * SDK does not retry a streamed body, so each request is retried here, with a fresh stream.
   */
  async uploadFile(
    key: string,
    file: string,
    size: number,
    contentType: string,
    onUploadId: UploadListener,
    signal?: AbortSignal,
    labels: ObjectLabelsArg = {},
  ): Promise<void> {
    checkedKey(key);
    const sdk = s3Sdk();
    // on the PUT, or on CreateMultipartUpload: the object carries them from its first instant
    const head = {
      Bucket: this.name,
      Key: key,
      ContentType: contentType,
      ...(labels.tags ? { Tagging: taggingHeader(labels.tags) } : {}),
      ...(labels.metadata ? { Metadata: labels.metadata } : {}),
    };
    const range = (start: number, length: number): Readable =>
      length === 0 ? Readable.from([]) : createReadStream(file, { start, end: start + length - 1, highWaterMark: 256 * 1024 });
    const partSize = Math.max(PART_SIZE, Math.ceil(size / 9000));
    if (size <= Math.max(partSize, uploadCutoff())) {
      await retried(signal, () =>
        this.client.send(new sdk.PutObjectCommand({ ...head, Body: range(0, size), ContentLength: size }), { abortSignal: signal }),
      );
      return;
    }
    const created = await retried(signal, () => this.client.send(new sdk.CreateMultipartUploadCommand(head), { abortSignal: signal }));
    const uploadId = created.UploadId ?? '';
    // **Important**: recorded before any part is sent, so a crash mid-upload leaves an id the
    // next run can abort.
    onUploadId(uploadId);
    try {
      const parts = Array.from({ length: Math.ceil(size / partSize) }, (_, i) => i);
      const etags = await mapLimit(parts, Math.max(1, Math.min(4, this.concurrency)), async (i) => {
        const length = Math.min(partSize, size - i * partSize);
        const r = await retried(signal, () =>
          this.client.send(
            new sdk.UploadPartCommand({
              Bucket: this.name,
              Key: key,
              UploadId: uploadId,
              PartNumber: i + 1,
              Body: range(i * partSize, length),
              ContentLength: length,
            }),
            { abortSignal: signal },
          ),
        );
        return r.ETag ?? '';
      });
      await retried(signal, () =>
        this.client.send(
          new sdk.CompleteMultipartUploadCommand({
            Bucket: this.name,
            Key: key,
            UploadId: uploadId,
            MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
          }),
        ),
      );
    } catch (err) {
      await this.client
        .send(new sdk.AbortMultipartUploadCommand({ Bucket: this.name, Key: key, UploadId: uploadId }))
        .catch(() => undefined);
      throw err;
    }
  }

  /** A server-side copy: S3 keeps the object's metadata and tags (the default COPY directives). */
  async copy(fromKey: string, toKey: string): Promise<void> {
    await this.client.send(
      new (s3Sdk().CopyObjectCommand)({
        Bucket: this.name,
        Key: checkedKey(toKey),
        CopySource: `${this.name}/${encodeCopySource(fromKey)}`,
      }),
    );
  }

  async copyMany(pairs: readonly { from: string; to: string }[]): Promise<void> {
    await mapLimit(pairs, this.concurrency, (p) => this.copy(p.from, p.to));
  }

  /** Deletes in batches of 1,000; a key that is already gone is not an error. */
  async deleteKeys(keys: readonly string[]): Promise<void> {
    keys.forEach(checkedKey);
    const batches: string[][] = [];
    for (let i = 0; i < keys.length; i += DELETE_BATCH) batches.push(keys.slice(i, i + DELETE_BATCH));
    await mapLimit(batches, Math.min(4, this.concurrency), async (batch) => {
      const r = await this.client.send(
        new (s3Sdk().DeleteObjectsCommand)({ Bucket: this.name, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
      );
      const failed = (r.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length > 0) {
        const first = failed[0];
        throw new Error(
          `could not delete ${failed.length} object(s), first ${this.url(first?.Key ?? '')}: ${first?.Code ?? ''} ${first?.Message ?? ''}`,
        );
      }
    });
  }

  /** Aborts a multipart upload; one that is already gone (completed or aborted) is fine. */
  async abortUpload(key: string, uploadId: string): Promise<'aborted' | 'gone' | 'unsupported'> {
    try {
      await this.client.send(new (s3Sdk().AbortMultipartUploadCommand)({ Bucket: this.name, Key: key, UploadId: uploadId }));
      return 'aborted';
    } catch (err) {
      const code = s3ErrorCode(err);
      if (code === 'NoSuchUpload' || isNotFound(err)) return 'gone';
      // Some S3-compatible servers cannot abort; nothing more can be done from here.
      if (code === 'NotImplemented' || code === 'MethodNotAllowed' || code === '405' || code === '501') return 'unsupported';
      throw new Error(describeS3Error(err, `aborting upload ${uploadId} of ${this.url(key)}`), { cause: err });
    }
  }

  /** Closes the client's connections; once, however many users the instance has. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.destroy();
  }
}

/**
 * CopySource is "bucket/key" with the key URL-encoded, slashes kept. Characters that need no
 * escaping in a header (`#`, `=`, `:`, `@`, `,`, `$`, `;`, `&`) are sent as they are: S3 reads
 * them either way, and some S3-compatible servers decode the header with decodeURI, which
 * leaves `%23` as it is and would look for a key that does not exist.
 */
export function encodeCopySource(key: string): string {
  return key
    .split('/')
    .map((part) => encodeURIComponent(part).replace(/%(23|3D|3A|40|2C|24|3B|26)/g, (escaped) => decodeURIComponent(escaped)))
    .join('/');
}

/**
 * `send` again after a transient failure (throttling, a 5xx, a dropped connection), up to the
 * client's MAX_ATTEMPTS, backing off as the SDK does: for requests whose body is a stream,
 * which the SDK sends once only. `send` builds the request (and its stream) anew each time.
 */
async function retried<T>(signal: AbortSignal | undefined, send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS || signal?.aborted || !isTransientS3Error(err)) throw err;
      const wait = Math.min(20_000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2);
      await new Promise((done) => setTimeout(done, wait));
    }
  }
}
