import { migration001 } from './001_initial.ts';
import { migration002 } from './002_evidence.ts';
import { migration003 } from './003_s3_ledger.ts';
import { migration004 } from './004_connections.ts';
import { migration005 } from './005_app_secrets.ts';
import { migration006 } from './006_canary_status.ts';
import { assertMigrationRegistry, type Migration } from './migration.ts';

export { assertMigrationRegistry, migrationLabel, type Migration } from './migration.ts';

/** Every migration, oldest first. Append only; never reorder, renumber or edit. */
export const MIGRATIONS: readonly Migration[] = [migration001, migration002, migration003, migration004, migration005, migration006];

assertMigrationRegistry(MIGRATIONS);

export const LATEST_SCHEMA_VERSION: number = MIGRATIONS.at(-1)?.version ?? 0;
