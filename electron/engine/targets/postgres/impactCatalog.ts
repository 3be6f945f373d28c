/**
 * What the target's own catalog says depends on it: views and materialized views over it, found
 * recursively through pg_depend / pg_rewrite (a view on a view on the target is found too, and
 * so are views over a partitioned parent of the target); foreign keys into and out of it;
 * triggers on it; publications it is in; its partitions and the tables it is a partition of.
 * Fixed SQL with bound values only, read in the caller's READ ONLY transaction.
 */
import type { PgClient } from './connect.ts';
import { query } from './connect.ts';
import { quoteQualified } from './sql.ts';

export interface CatalogRelation {
  oid: string;
  /** `schema.name`, each part quoted only where PostgreSQL needs it */
  name: string;
  /** pg_class.relkind: r table, p partitioned table, v view, m materialized view, f foreign table */
  kind: string;
}

export interface CatalogImpact {
  target: CatalogRelation;
  /** tables the target is a partition of, nearest first */
  ancestors: CatalogRelation[];
  /** views and materialized views, each with the relation it reads (its parent in the walk) */
  dependents: (CatalogRelation & { reads: string; depth: number })[];
  partitions: (CatalogRelation & { parent: string; bound: string | null })[];
  foreignKeys: { name: string; outgoing: boolean; other: CatalogRelation; onDelete: string; onUpdate: string }[];
  triggers: { name: string; fn: string; enabled: boolean; timing: string }[];
  publications: string[];
}

const NAME = `pg_catalog.format('%I.%I', n.nspname, c.relname)`;

const ACTIONS: Readonly<Record<string, string>> = {
  a: 'no action',
  r: 'restrict',
  c: 'cascade',
  n: 'set null',
  d: 'set default',
};

/** The target and everything in its catalog that a rewrite of its partitions touches. */
export async function catalogImpact(client: PgClient, targetOid: string): Promise<CatalogImpact> {
  const rel = async (oid: string): Promise<CatalogRelation> => {
    const r = await query<CatalogRelation>(
      client,
      `SELECT c.oid::text AS oid, ${NAME} AS name, c.relkind::text AS kind
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = :oid::oid`,
      { oid },
    );
    const found = r.rows[0];
    if (!found) throw new Error(`relation ${oid} vanished from the catalog`);
    return found;
  };
  const target = await rel(targetOid);

  const ancestors = (
    await query<CatalogRelation>(
      client,
      `SELECT c.oid::text AS oid, ${NAME} AS name, c.relkind::text AS kind
         FROM pg_catalog.pg_partition_ancestors(:oid::oid::regclass) WITH ORDINALITY AS a(relid, ord)
         JOIN pg_catalog.pg_class c ON c.oid = a.relid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE a.relid <> :oid::oid ORDER BY a.ord`,
      { oid: targetOid },
    )
  ).rows;

  // A view's rule depends on every relation it reads; walk from the target (and the tables it
  // is a partition of, whose readers see its rows) to the views over them, and on.
  const dependents = (
    await query<CatalogRelation & { reads: string; depth: number }>(
      client,
      `WITH RECURSIVE dep(oid, reads, depth) AS (
         SELECT DISTINCT r.ev_class, d.refobjid, 1
           FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_rewrite r ON r.oid = d.objid
          WHERE d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.refclassid = 'pg_catalog.pg_class'::regclass
            AND d.refobjid = ANY(:roots::oid[]) AND r.ev_class <> d.refobjid
         UNION
         SELECT r.ev_class, d.refobjid, dep.depth + 1
           FROM dep JOIN pg_catalog.pg_depend d ON d.refobjid = dep.oid
                      AND d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.refclassid = 'pg_catalog.pg_class'::regclass
           JOIN pg_catalog.pg_rewrite r ON r.oid = d.objid
          WHERE r.ev_class <> d.refobjid AND dep.depth < 32
       )
       SELECT DISTINCT ON (dep.oid, dep.reads) dep.oid::text AS oid, ${NAME} AS name, c.relkind::text AS kind,
              dep.reads::text AS reads, dep.depth
         FROM dep JOIN pg_catalog.pg_class c ON c.oid = dep.oid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        ORDER BY dep.oid, dep.reads, dep.depth`,
      { roots: [targetOid, ...ancestors.map((a) => a.oid)] },
    )
  ).rows.sort((a, b) => a.depth - b.depth || a.name.localeCompare(b.name));

  const partitions = (
    await query<CatalogRelation & { parent: string; bound: string | null }>(
      client,
      `SELECT c.oid::text AS oid, ${NAME} AS name, c.relkind::text AS kind, t.parentrelid::text AS parent,
              pg_catalog.pg_get_expr(c.relpartbound, c.oid) AS bound
         FROM pg_catalog.pg_partition_tree(:oid::oid::regclass) t
         JOIN pg_catalog.pg_class c ON c.oid = t.relid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE t.level > 0 ORDER BY t.level, 2`,
      { oid: targetOid },
    )
  ).rows;

  const fks = await query<{
    name: string;
    outgoing: boolean;
    other_oid: string;
    other: string;
    other_kind: string;
    del: string;
    upd: string;
  }>(
    client,
    `SELECT k.conname::text AS name, k.conrelid = :oid::oid AS outgoing,
            c.oid::text AS other_oid, ${NAME} AS other, c.relkind::text AS other_kind,
            k.confdeltype::text AS del, k.confupdtype::text AS upd
       FROM pg_catalog.pg_constraint k
       JOIN pg_catalog.pg_class c ON c.oid = CASE WHEN k.conrelid = :oid::oid THEN k.confrelid ELSE k.conrelid END
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE k.contype = 'f' AND (k.conrelid = :oid::oid OR k.confrelid = :oid::oid) AND k.conparentid = 0
      ORDER BY 2 DESC, 1`,
    { oid: targetOid },
  );

  const triggers = await query<{ name: string; fn: string; enabled: string; def: string }>(
    client,
    `SELECT t.tgname::text AS name, pg_catalog.format('%I.%I', pn.nspname, p.proname) AS fn, t.tgenabled::text AS enabled,
            pg_catalog.pg_get_triggerdef(t.oid) AS def
       FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
       JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
      WHERE t.tgrelid = :oid::oid AND NOT t.tgisinternal ORDER BY 1`,
    { oid: targetOid },
  );

  const publications = await query<{ name: string }>(
    client,
    `SELECT DISTINCT pt.pubname::text AS name FROM pg_catalog.pg_publication_tables pt
      WHERE pg_catalog.to_regclass(pg_catalog.format('%I.%I', pt.schemaname, pt.tablename)) = :oid::oid ORDER BY 1`,
    { oid: targetOid },
  );

  return {
    target,
    ancestors,
    dependents,
    partitions,
    foreignKeys: fks.rows.map((k) => ({
      name: k.name,
      outgoing: k.outgoing,
      other: { oid: k.other_oid, name: k.other, kind: k.other_kind },
      onDelete: ACTIONS[k.del] ?? k.del,
      onUpdate: ACTIONS[k.upd] ?? k.upd,
    })),
    triggers: triggers.rows.map((t) => ({
      name: t.name,
      fn: t.fn,
      enabled: t.enabled !== 'D',
      timing: /CREATE (?:CONSTRAINT )?TRIGGER \S+ (.*?) ON /i.exec(t.def)?.[1]?.toLowerCase() ?? '',
    })),
    publications: publications.rows.map((p) => p.name),
  };
}

/** The oid each name resolves to in this session (its search_path), or none: names as a parser gives them (`mart.t`, `t`). */
export async function resolveRelations(client: PgClient, names: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const name of names) {
    const parts = name.split('.');
    if (parts.length < 1 || parts.length > 3 || parts.some((p) => p === '')) continue;
    let quoted: string;
    try {
      quoted = quoteQualified(parts.slice(-2));
    } catch {
      continue; // not a name PostgreSQL could hold: it reads nothing of ours
    }
    const r = await query<{ oid: string | null }>(client, 'SELECT pg_catalog.to_regclass(:name)::oid::text AS oid', { name: quoted });
    const oid = r.rows[0]?.oid;
    if (oid) out.set(name, oid);
  }
  return out;
}
