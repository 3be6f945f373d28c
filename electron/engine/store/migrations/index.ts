import { migration001 } from './001_initial.ts';
import { assertMigrationRegistry, type Migration } from './migration.ts';

export { assertMigrationRegistry, migrationLabel, type Migration } from './migration.ts';

/** Every migration, oldest first. Append only; never reorder, renumber or edit. */
export const MIGRATIONS: readonly Migration[] = [migration001];

assertMigrationRegistry(MIGRATIONS);

export const LATEST_SCHEMA_VERSION: number = MIGRATIONS.at(-1)?.version ?? 0;
