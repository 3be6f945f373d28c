/**
 * The manifest of a bundle: for every item of every section, the SHA-256 of the item and a short
 * digest of each of its fields. Its own hash is written into the audit chain (the note.exported
 * entry), so the chain protects the manifest and the manifest protects every item — and when a
 * byte changes, the field digests say which item and which field.
 */
import { canonicalJson } from '../../../shared/canonicalJson.ts';
import { itemId, SECTION_NAMES, type BundleSections, type SectionName } from './bundle.ts';
import { sha256Hex } from './chain.ts';

export interface ManifestItem {
  id: string;
  sha256: string;
  /** field name → first 16 hex digits of SHA-256 of its canonical JSON (a locator, not a seal). */
  fields: Record<string, string>;
}

export interface Manifest {
  sections: Record<string, ManifestItem[]>;
}

const canonical = (value: unknown) => canonicalJson(value === undefined ? null : value);
const digest = (value: unknown) => sha256Hex(canonical(value)).slice(0, 16);

export function manifestItem(section: SectionName, item: object): ManifestItem {
  const record = item as Record<string, unknown>;
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(record)) {
    fields[name] = digest(value);
    // One level down too, so a change inside `detail` or `sourceSums` is named to the key.
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [inner, innerValue] of Object.entries(value)) fields[`${name}.${inner}`] = digest(innerValue);
    }
  }
  return { id: itemId(section, record), sha256: sha256Hex(canonical(record)), fields };
}

export function buildManifest(sections: BundleSections): Manifest {
  const out: Record<string, ManifestItem[]> = {};
  for (const name of SECTION_NAMES) out[name] = (sections[name] as object[]).map((item) => manifestItem(name, item));
  return { sections: out };
}

export function manifestHash(manifest: Manifest): string {
  return sha256Hex(canonicalJson(manifest));
}

/** Which fields of an item differ from its manifest entry (changed, added or removed). */
export function changedFields(expected: ManifestItem, actual: ManifestItem): string[] {
  const names = new Set([...Object.keys(expected.fields), ...Object.keys(actual.fields)]);
  const changed = [...names].filter((n) => expected.fields[n] !== actual.fields[n]);
  // Name the deepest change: `detail.rows` rather than `detail` as well.
  return changed.filter((n) => !changed.some((m) => m.startsWith(`${n}.`))).sort();
}
