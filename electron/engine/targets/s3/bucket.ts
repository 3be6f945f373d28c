/**
 * One bucket through one S3 client: paginated listings, streaming reads, small PUTs, multipart
 * uploads (lib-storage), server-side copies and batched deletes, each with bounded concurrency.
 */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { s3Sdk, storageSdk } from './sdk.ts';
import { mapLimit } from './concurrency.ts';
import { describeS3Error, isNotFound, s3ErrorCode } from './errors.ts';
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
const DELETE_BATCH = 1000;

type UploadListener = (uploadId: string) => void;

export class S3Bucket {
  /** key → who wants to know the upload id the moment S3 hands it out */
  private readonly uploadListeners = new Map<string, UploadListener>();

  constructor(
    readonly name: string,
    readonly client: S3Client,
    readonly concurrency: number,
  ) {
    // **Important**: the upload id is recorded as soon as CreateMultipartUpload answers, before
    // any part is sent, so a crash mid-upload leaves an id the next run can abort.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (context.commandName === 'CreateMultipartUploadCommand') {
          const key = (args.input as { Key?: string }).Key ?? '';
          const uploadId = (result.output as { UploadId?: string }).UploadId;
          if (uploadId) this.uploadListeners.get(key)?.(uploadId);
        }
        return result;
      },
      { step: 'initialize', name: 'backfillRunbookUploadIds' },
    );
  }

  url(key: string): string {
    return s3Url(this.name, key);
  }

  /** Throws with the reason when the bucket cannot be reached or read. */
  async check(): Promise<void> {
    await this.client.send(new (s3Sdk().HeadBucketCommand)({ Bucket: this.name }));
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
    const r = await this.client.send(new (s3Sdk().GetObjectCommand)({ Bucket: this.name, Key: key }), { abortSignal: signal });
    if (r.Body === undefined) throw new Error(`${this.url(key)}: GetObject returned no body`);
    return r.Body as Readable;
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
   * Uploads a local file: one PUT when it is small, a multipart upload of `concurrency` parts
   * in flight otherwise. `onUploadId` hears the multipart upload's id before any part is sent.
   * On failure lib-storage aborts the upload; if that abort fails too, the id recorded through
   * `onUploadId` lets the caller abort it later.
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
    const partSize = Math.max(PART_SIZE, Math.ceil(size / 9000));
    this.uploadListeners.set(key, onUploadId);
    try {
      const upload = new (storageSdk().Upload)({
        client: this.client,
        params: {
          Bucket: this.name,
          Key: key,
          Body: createReadStream(file, { highWaterMark: 1024 * 1024 }),
          ContentType: contentType,
          ContentLength: size,
          // on the PUT, or on CreateMultipartUpload: the object carries them from its first instant
          ...(labels.tags ? { Tagging: taggingHeader(labels.tags) } : {}),
          ...(labels.metadata ? { Metadata: labels.metadata } : {}),
        },
        partSize,
        // lib-storage holds queueSize parts in memory: 4 × 8 MiB bounds an upload at 32 MiB
        queueSize: Math.max(1, Math.min(4, this.concurrency)),
        leavePartsOnError: false,
      });
      const abort = (): void => void upload.abort().catch(() => undefined);
      signal?.addEventListener('abort', abort, { once: true });
      try {
        await upload.done();
      } finally {
        signal?.removeEventListener('abort', abort);
      }
    } finally {
      this.uploadListeners.delete(key);
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

  close(): void {
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
