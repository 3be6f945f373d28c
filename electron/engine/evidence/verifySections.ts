/**
 * Compares a bundle's sections with its manifest and names each difference: an item removed,
 * added, moved, or changed — with the fields that changed.
 */
import { SECTION_NAMES, type SectionName } from './bundle.ts';
import { changedFields, manifestItem, type Manifest, type ManifestItem } from './manifest.ts';

const NOUN: Record<SectionName, string> = {
  run: 'run',
  plan: 'plan',
  job: 'job',
  partitions: 'partition',
  evidence: 'evidence',
  signoffs: 'sign-off',
  identities: 'identity',
  audit: 'audit entry',
};

export function compareSection(section: SectionName, expected: readonly ManifestItem[], items: readonly object[]): string[] {
  const noun = NOUN[section];
  const actual = items.map((item) => manifestItem(section, item));
  const problems: string[] = [];
  // Sets and maps, not includes/find: a bundle holds tens of thousands of audit entries.
  const expectedById = new Map(expected.map((e) => [e.id, e]));
  const actualIds = new Set(actual.map((a) => a.id));
  for (const e of expected)
    if (!actualIds.has(e.id)) problems.push(`${noun} ${e.id} is missing from ${section}[]: it was removed after export`);
  for (const a of actual)
    if (!expectedById.has(a.id)) problems.push(`${noun} ${a.id} in ${section}[] was not in the note when it was exported: it was added`);
  const common = expected.filter((e) => actualIds.has(e.id)).map((e) => e.id);
  const order = actual.filter((a) => expectedById.has(a.id)).map((a) => a.id);
  const at = common.findIndex((id, i) => order[i] !== id);
  if (at >= 0) {
    const [a, b] = [common[at], common[at + 1]];
    problems.push(
      order[at] === b && order[at + 1] === a
        ? `${section}[]: ${noun} ${a} and ${b} were swapped (reordered after export)`
        : `${section}[]: the order was changed after export, first at ${noun} ${order[at]} (expected ${common[at]})`,
    );
  }
  actual.forEach((item, index) => {
    const want = expectedById.get(item.id);
    if (!want || want.sha256 === item.sha256) return;
    const fields = changedFields(want, item);
    problems.push(
      `${noun} ${item.id} (${section}[${index}]) was changed after export: field${fields.length === 1 ? '' : 's'} ${fields.join(', ')}`,
    );
  });
  return problems;
}

export function compareSections(
  manifest: Manifest,
  bundle: Record<SectionName, readonly object[]>,
  skip: readonly SectionName[] = [],
): string[] {
  const problems: string[] = [];
  for (const section of SECTION_NAMES) {
    if (skip.includes(section)) continue;
    problems.push(...compareSection(section, manifest.sections[section] ?? [], bundle[section]));
  }
  return problems;
}

/** For the chain verifier: which fields of an audit entry differ from the manifest. */
export function explainAuditEdit(manifest: Manifest, entry: object): string | undefined {
  const item = manifestItem('audit', entry);
  const want = (manifest.sections.audit ?? []).find((e) => e.id === item.id);
  if (!want) return undefined;
  const fields = changedFields(want, item).filter((f) => f !== 'hash' && f !== 'prevHash');
  return fields.length > 0 ? `field${fields.length === 1 ? '' : 's'} ${fields.join(', ')} changed` : undefined;
}
