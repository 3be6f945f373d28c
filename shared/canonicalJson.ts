// RFC 8785 canonical JSON (JCS), the form a plan is hashed and signed in.
// The `canonicalize` package does the serialising; this module first refuses values JSON
// cannot carry faithfully, because canonicalize would otherwise change them silently
// (undefined in an array becomes null, a Map becomes {}, a Date becomes a string).
import canonicalizeModule from 'canonicalize';

type Serialize = (input: unknown) => string | undefined;

// **Hazard**: canonicalize is CommonJS (`module.exports = fn`) but its typings declare
// `export default`, so under NodeNext TypeScript types the default import as the module
// object while Node hands us the function itself. Accept either shape at run time.
const imported: unknown = canonicalizeModule;
const serialize: Serialize = typeof imported === 'function' ? (imported as Serialize) : (imported as { default: Serialize }).default;

/**
 * Canonical JSON text of a JSON-like value: plain objects, arrays, strings, finite numbers,
 * booleans and null. Object properties whose value is undefined are omitted, as JSON.stringify
 * does, so `{ owner: undefined }` and `{}` hash the same. Throws on anything else, naming where.
 */
export function canonicalJson(value: unknown): string {
  check(value, '$', new Set());
  const text = serialize(value);
  if (text === undefined) throw new Error('canonicalJson: nothing to serialise');
  return text;
}

function check(value: unknown, where: string, parents: Set<object>): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`canonicalJson: ${where} is ${String(value)}, which JSON cannot represent`);
    return;
  }
  if (value === undefined) throw new Error(`canonicalJson: ${where} is undefined, which JSON cannot represent`);
  if (typeof value !== 'object') throw new Error(`canonicalJson: ${where} is a ${typeof value}, which JSON cannot represent`);
  if (parents.has(value)) throw new Error(`canonicalJson: ${where} refers back to itself (a cycle)`);
  parents.add(value);
  if (Array.isArray(value)) {
    value.forEach((item, i) => check(item, `${where}[${i}]`, parents));
  } else {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
      throw new Error(`canonicalJson: ${where} is a ${kind}, not a plain object: convert it to JSON values first`);
    }
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined) check(item, `${where}.${key}`, parents);
    }
  }
  parents.delete(value);
}
