/**
 * The JSON bundle of an incident note: every piece of evidence of one run, the slice of the
 * audit chain that covers it, the sign-offs and checkpoints with their signatures, and the
 * public keys registered when it was exported. It is the source of the Markdown and HTML
 * notes and of archives, and `run-backfill verify note.json` checks it with no database.
 */
import { z } from 'zod';
import type { ChainedEntry } from './chain.ts';
import type { Checkpoint } from './checkpoints.ts';
import type { Manifest } from './manifest.ts';

export const BUNDLE_FORMAT = 'backfill-runbook/incident-note@1';

export interface BundleEvidence {
  id: number;
  runId: string | null;
  planHash: string | null;
  kind: string;
  createdAt: string;
  /** The exact stored text; bodySha256 is its SHA-256. */
  bodyJson: string;
  bodySha256: string;
}

export interface BundleSignoff {
  id: number;
  statement: Record<string, unknown>;
  signedText: string;
  signature: string;
  publicKeyPem: string;
  importedAt: string;
  importedBy: string;
}

export interface BundleIdentity {
  name: string;
  role: string;
  publicKeyPem: string;
  fingerprint: string;
  registeredAt: string;
}

/** The parts the manifest covers, each a list of items. */
export interface BundleSections {
  run: Record<string, unknown>[];
  plan: { planHash: string; requestId: string; jobName: string; plan: unknown; createdAt: string }[];
  job: { jobHash: string; definition: unknown }[];
  partitions: Record<string, unknown>[];
  evidence: BundleEvidence[];
  signoffs: BundleSignoff[];
  identities: BundleIdentity[];
  audit: ChainedEntry[];
}

export const SECTION_NAMES = ['run', 'plan', 'job', 'partitions', 'evidence', 'signoffs', 'identities', 'audit'] as const;
export type SectionName = (typeof SECTION_NAMES)[number];

export interface NoteBundle extends BundleSections {
  format: typeof BUNDLE_FORMAT;
  runId: string;
  exportedAt: string;
  exportedBy: string;
  checkpoints: Checkpoint[];
  manifest: Manifest;
}

/** How an item of a section is named in the manifest and in messages. */
export function itemId(section: SectionName, item: Record<string, unknown>): string {
  switch (section) {
    case 'run':
      return String(item.runId);
    case 'plan':
      return String(item.planHash);
    case 'job':
      return String(item.jobHash);
    case 'partitions':
      return String(item.key);
    case 'evidence':
    case 'signoffs':
      return `#${String(item.id)}`;
    case 'identities':
      return String(item.name);
    case 'audit':
      return `seq ${String(item.seq)}`;
  }
}

const item = z.record(z.string(), z.unknown());
const auditEntry = z.looseObject({
  seq: z.number().int(),
  at: z.string(),
  runId: z.string().nullable(),
  entity: z.string(),
  entityId: z.string(),
  event: z.string(),
  fromStatus: z.string().nullable(),
  toStatus: z.string().nullable(),
  actor: z.string(),
  detail: item,
  prevHash: z.string(),
  hash: z.string(),
});
const checkpoint = z.object({
  id: z.number(),
  seq: z.number(),
  hash: z.string(),
  signer: z.string(),
  signerKey: z.string(),
  at: z.string(),
  reason: z.string(),
  signature: z.string(),
});

const nullableText = z.string().nullable();

/**
 * Structure only: values are judged by verification, which can then say exactly what changed.
 * Every field the verifier reads is typed here, so a crafted bundle is refused with the field's
 * name instead of failing somewhere inside the checks.
 */
export const bundleSchema = z.object({
  format: z.literal(BUNDLE_FORMAT),
  runId: z.string(),
  exportedAt: z.string(),
  exportedBy: z.string(),
  run: z.array(
    z.looseObject({
      runId: z.string(),
      planHash: z.string(),
      jobHash: z.string(),
      kind: z.string(),
      tier: nullableText,
      executedBy: nullableText,
    }),
  ),
  plan: z.array(z.looseObject({ planHash: z.string() })),
  job: z.array(z.looseObject({ jobHash: z.string() })),
  partitions: z.array(z.looseObject({ key: z.string() })),
  evidence: z.array(
    z.looseObject({
      id: z.number(),
      runId: nullableText,
      planHash: nullableText,
      kind: z.string(),
      createdAt: z.string(),
      bodyJson: z.string(),
      bodySha256: z.string(),
    }),
  ),
  signoffs: z.array(
    z.looseObject({
      id: z.number(),
      statement: item,
      signedText: z.string(),
      signature: z.string(),
      publicKeyPem: z.string(),
    }),
  ),
  identities: z.array(z.looseObject({ name: z.string(), role: z.string(), publicKeyPem: z.string(), fingerprint: z.string() })),
  audit: z.array(auditEntry),
  checkpoints: z.array(checkpoint),
  manifest: z.object({
    sections: z.record(z.string(), z.array(z.object({ id: z.string(), sha256: z.string(), fields: z.record(z.string(), z.string()) }))),
  }),
});
