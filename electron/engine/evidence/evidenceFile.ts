/**
 * Reading a note bundle (JSON) or a run archive (gzip) that someone hands us, within the
 * limits of shared/limits.ts, and verifying it against a Trust. Every way such a file can be
 * wrong — missing, too large, a gzip bomb, not JSON, nested too deep, the wrong shape — ends
 * as an InputError naming the file (exit 2), and every file that parses gets a verdict.
 */
import { InputError } from '../../../shared/errors.ts';
import { LIMITS, overLimitError } from '../../../shared/limits.ts';
import { readBoundedFile } from '../input/boundedFile.ts';
import { parseBoundedJson } from '../input/boundedJson.ts';
import { isArchive, readArchive, verifyArchive, type RunArchive } from './archive.ts';
import { bundleSchema } from './bundle.ts';
import type { Trust } from './trust.ts';
import { verifyBundle, type BundleVerification } from './verifyBundle.ts';

export type EvidenceFile = { kind: 'bundle'; data: unknown } | { kind: 'archive'; archive: RunArchive };

export async function readEvidenceFile(file: string, what = 'file to verify'): Promise<EvidenceFile> {
  let data: Buffer;
  try {
    data = readBoundedFile(file, { what, limit: Math.max(LIMITS.bundleBytes, LIMITS.archiveFileBytes) });
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(code === 'ENOENT' ? `${what} ${file} not found` : `cannot read ${what} ${file}: ${(err as Error).message}`, {
      file,
    });
  }
  if (isArchive(data)) {
    if (data.length > LIMITS.archiveFileBytes)
      throw overLimitError({ file, what: 'run archive', size: data.length, limit: LIMITS.archiveFileBytes, unit: 'bytes' });
    const archive = await readArchive(data, file);
    checkShape(archive.bundle, file, 'bundle.');
    return { kind: 'archive', archive };
  }
  if (data.length > LIMITS.bundleBytes)
    throw overLimitError({ file, what: 'note bundle', size: data.length, limit: LIMITS.bundleBytes, unit: 'bytes' });
  const bundle = parseBoundedJson(data.toString('utf8'), { file, what: 'note bundle' });
  checkShape(bundle, file, '');
  return { kind: 'bundle', data: bundle };
}

/** A file that is not shaped like a bundle cannot be judged: exit 2, naming the field, like any other bad input file. */
function checkShape(data: unknown, file: string, prefix: string): void {
  const parsed = bundleSchema.safeParse(data);
  if (parsed.success) return;
  const issue = parsed.error.issues[0];
  const field = `${prefix}${issue?.path.join('.') ?? ''}`;
  throw new InputError(`${file} is not a valid incident-note bundle: field "${field}": ${issue?.message ?? 'is invalid'}`, { file, field });
}

/** The verdict on a file; an archive's ledger rows are held to its bundle too. */
export function verifyEvidence(file: string, evidence: EvidenceFile, trust: Trust): BundleVerification {
  try {
    return evidence.kind === 'archive' ? verifyArchive(evidence.archive, trust) : verifyBundle(evidence.data, trust);
  } catch (err) {
    // **Hazard**: the input is hostile by assumption; a check that trips over a crafted value
    // must still end as a refusal that names the file, never as a stack trace.
    throw new InputError(`${file} could not be verified: ${err instanceof Error ? err.message : String(err)}`, { file });
  }
}
