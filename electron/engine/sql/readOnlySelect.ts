/**
 * The first of the three guards that keep a user's SQL from writing (README "What is
 * guaranteed"): before any SQL text from a job, plan or config is sent, its parse tree must be
 * exactly one SELECT (or VALUES) that
 *   - holds no INSERT, UPDATE, DELETE or MERGE (a data-modifying CTE) and no SELECT … INTO;
 *   - locks nothing (FOR UPDATE / FOR SHARE);
 *   - calls none of the functions that act outside the transaction's snapshot: other sessions
 *     (pg_terminate_backend, pg_cancel_backend), session state that outlives a rollback
 *     (advisory locks, set_config, NOTIFY), other connections (dblink), server files and
 *     programs (lo_import, pg_read_file), SQL given as text (query_to_xml), WAL and
 *     replication control.
 * The other two guards hold even where this one could be fooled: the text is sent with the
 * extended protocol, which runs exactly one statement (connect.ts query()), and it runs in a
 * READ ONLY transaction (or, inside the write, a READ ONLY savepoint: userQuery.ts), so a
 * function that writes fails on the server.
 */
import { InputError, showValue } from '../../../shared/errors.ts';
import { nameParts, nodes, parsePg, PgSyntaxError } from './pgParse.ts';

/** Where a SQL text came from, for the message: `validation[0].target` of job "refund-daily". */
export interface SqlOrigin {
  /** dotted path of the field in its file */
  field: string;
  /** `job "refund-daily"`, `plan "bf-1"`, the file's path … */
  where?: string;
  /** named parameters the text may use (default :partition_start, :partition_end, :run_id) */
  params?: readonly string[];
}

/** What the parse tree says the statement reads and calls (names lower case, as parsed). */
export interface SelectFacts {
  /** functions called, each as written: `count`, `pg_catalog.now`, `my_schema.f` */
  functions: string[];
  /** relations read (tables, views, CTE names are left out), as written: `orders`, `mart.refund_daily` */
  relations: string[];
}

/** Functions a read must never call, by exact name … */
const FORBIDDEN_FUNCTIONS = new Set([
  'pg_terminate_backend',
  'pg_cancel_backend',
  'pg_signal_backend',
  'set_config',
  'pg_notify',
  'pg_reload_conf',
  'pg_rotate_logfile',
  'pg_promote',
  'pg_switch_wal',
  'pg_create_restore_point',
  'pg_drop_replication_slot',
  'pg_copy_physical_replication_slot',
  'pg_copy_logical_replication_slot',
  'pg_logical_emit_message',
  'pg_log_backend_memory_contexts',
  'pg_log_standby_snapshot',
  'pg_wal_replay_pause',
  'pg_wal_replay_resume',
  'pg_backup_start',
  'pg_backup_stop',
  'pg_import_system_collations',
  'pg_stat_file',
  'pg_current_logfile',
  'setval',
  'query_to_xml',
  'query_to_xmlschema',
  'query_to_xml_and_xmlschema',
  'cursor_to_xml',
  'cursor_to_xmlschema',
  'pg_sync_replication_slots',
]);

/** … and by prefix: families where every member acts outside the snapshot. */
const FORBIDDEN_PREFIXES = [
  'dblink', // another connection: its writes are not in our READ ONLY transaction
  'lo_', // large objects: lo_import/lo_export read and write server files
  'pg_advisory', // session-level locks outlive a rollback (and could block the executor's)
  'pg_try_advisory',
  'pg_read_', // server files: pg_read_file, pg_read_binary_file
  'pg_ls_', // server folders
  'pg_file_', // adminpack: pg_file_write, pg_file_unlink …
  'pg_create_', // replication slots
  'pg_replication_origin_',
  'pg_stat_reset',
  'pg_replication_slot_advance',
];

const HINT =
  'a job, plan or config may only read: write one SELECT (a WITH … SELECT is fine) that changes nothing; the executor composes the one write itself';

function refuse(origin: SqlOrigin, sql: string, reason: string, hint = HINT): InputError {
  const where = origin.where ? `${origin.where}: ` : '';
  return new InputError(`${where}${origin.field}: ${reason}`, { field: origin.field, value: sql, hint });
}

/** The function a FuncCall node calls, as written (`schema.name` or `name`). */
function funcName(node: Record<string, unknown>): string[] {
  return nameParts(node.funcname);
}

/**
 * Parses `sql` and throws an InputError (exit 2, naming the field) unless it is exactly one
 * read-only SELECT as described above. Returns what it reads and calls.
 */
export async function checkReadOnlySelect(sql: string, origin: SqlOrigin): Promise<SelectFacts> {
  // The executor checks the same few texts once per partition: remember the ones that passed.
  const key = `${(origin.params ?? []).join(',')}\0${sql}`;
  const known = passed.get(key);
  if (known) return known;
  const facts = await check(sql, origin);
  if (passed.size >= 256) passed.delete(passed.keys().next().value as string);
  passed.set(key, facts);
  return facts;
}

/** Texts that passed, with what they read and call (bounded: oldest forgotten first). */
const passed = new Map<string, SelectFacts>();

async function check(sql: string, origin: SqlOrigin): Promise<SelectFacts> {
  let tree;
  try {
    tree = await parsePg(sql, origin.params);
  } catch (error) {
    if (error instanceof InputError) throw refuse(origin, sql, error.message, error.details.hint);
    if (error instanceof PgSyntaxError) {
      const at = error.position ? ` (at character ${error.position})` : '';
      throw refuse(origin, sql, `the SQL does not parse: ${error.message}${at}`, 'fix the SQL; it must be one SELECT PostgreSQL accepts');
    }
    throw error;
  }
  const statements = tree.stmts ?? [];
  if (statements.length !== 1) {
    throw refuse(
      origin,
      sql,
      statements.length === 0
        ? 'the SQL holds no statement'
        : `the SQL holds ${statements.length} statements; exactly one SELECT is allowed`,
    );
  }
  const root = statements[0]?.stmt as Record<string, unknown> | undefined;
  const kind = root ? Object.keys(root)[0] : undefined;
  if (kind !== 'SelectStmt') {
    throw refuse(origin, sql, `the SQL is a ${describeKind(kind)}, not a SELECT`);
  }
  const functions: string[] = [];
  const relations = new Set<string>();
  const cteNames = new Set<string>();
  for (const { type, node } of nodes(root)) {
    switch (type) {
      case 'InsertStmt':
      case 'UpdateStmt':
      case 'DeleteStmt':
      case 'MergeStmt':
        throw refuse(origin, sql, `the SQL holds ${describeKind(type)} (a data-modifying WITH): it would write`);
      case 'SelectStmt':
        if (node.intoClause) throw refuse(origin, sql, 'SELECT … INTO creates a table: it would write');
        if (Array.isArray(node.lockingClause) && node.lockingClause.length > 0)
          throw refuse(origin, sql, 'the SELECT locks rows (FOR UPDATE / FOR SHARE): a read never locks what others write');
        break;
      case 'FuncCall': {
        const parts = funcName(node);
        const name = parts[parts.length - 1] ?? '';
        if (FORBIDDEN_FUNCTIONS.has(name) || FORBIDDEN_PREFIXES.some((p) => name.startsWith(p))) {
          throw refuse(
            origin,
            sql,
            `the SQL calls ${showValue(parts.join('.'))}, which acts outside the read (other sessions, session state, server files or another connection)`,
          );
        }
        functions.push(parts.join('.'));
        break;
      }
      case 'CommonTableExpr':
        if (typeof node.ctename === 'string') cteNames.add(node.ctename);
        break;
      case 'RangeVar': {
        const parts = [node.catalogname, node.schemaname, node.relname].filter((p): p is string => typeof p === 'string' && p !== '');
        relations.add(parts.join('.'));
        break;
      }
      default:
        break;
    }
  }
  return { functions, relations: [...relations].filter((r) => r.includes('.') || !cteNames.has(r)) };
}

function describeKind(kind: string | undefined): string {
  switch (kind) {
    case undefined:
      return 'nothing';
    case 'InsertStmt':
      return 'an INSERT';
    case 'UpdateStmt':
      return 'an UPDATE';
    case 'DeleteStmt':
      return 'a DELETE';
    case 'MergeStmt':
      return 'a MERGE';
    case 'CopyStmt':
      return 'COPY';
    case 'TransactionStmt':
      return 'transaction control (BEGIN, COMMIT, ROLLBACK …)';
    case 'VariableSetStmt':
      return 'SET';
    case 'DoStmt':
      return 'DO block';
    case 'CallStmt':
      return 'CALL';
    case 'CreateTableAsStmt':
      return 'CREATE TABLE AS';
    default:
      return (
        kind
          .replace(/Stmt$/, '')
          .replace(/([a-z])([A-Z])/g, '$1 $2')
          .toUpperCase() + ' statement'
      );
  }
}
