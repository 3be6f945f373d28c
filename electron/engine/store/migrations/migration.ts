/** One schema step. `sql` is a plain string so its sha256 can be recorded and checked. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /**
   * The migration rebuilds a table others reference (SQLite's documented way to change a
   * constraint): foreign keys are switched off around its transaction — with them on, DROP
   * TABLE would cascade into the referencing rows — and `PRAGMA foreign_key_check` must come
   * back empty before it commits.
   */
  foreignKeysOff?: boolean;
}

/**
 * The registry must only go up: versions are positive integers, strictly increasing, names
 * unique and non-empty. Checked when the registry loads, so a bad merge fails every test.
 */
export function assertMigrationRegistry(migrations: readonly Migration[]): void {
  let previous = 0;
  const names = new Set<string>();
  for (const { version, name, sql } of migrations) {
    if (!Number.isInteger(version) || version <= previous) {
      throw new Error(`migration registry must be strictly increasing: version ${version} (${name}) follows ${previous}`);
    }
    if (name.trim() === '' || names.has(name)) throw new Error(`migration ${version} needs a unique, non-empty name (got "${name}")`);
    if (sql.trim() === '') throw new Error(`migration ${version} (${name}) has no SQL`);
    previous = version;
    names.add(name);
  }
}

/** The name used in messages and schema_migrations, e.g. "001_initial". */
export function migrationLabel({ version, name }: Migration): string {
  return `${String(version).padStart(3, '0')}_${name}`;
}
