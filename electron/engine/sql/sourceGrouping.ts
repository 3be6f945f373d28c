/**
 * The grain a job declares by its SQL: the output columns its source query groups by
 * (`group by 1, 2`, `group by cast(paid_at as date), customer_id`, or by an output alias). The
 * change by key matches rows on it when the target has no key. Read from PostgreSQL's own parse
 * tree; anything it cannot map to output columns with certainty (a SELECT *, a set operation,
 * ROLLUP/CUBE, an expression not in the select list) gives undefined rather than a guess.
 */
import { parsePg, type PgNode } from './pgParse.ts';

/** The tree without `location` fields, so the same expression written twice compares equal. */
function shape(node: unknown): string {
  return JSON.stringify(node, (key, value: unknown) => (key === 'location' ? undefined : value));
}

/**
 * The output column names (of `outputs`, the query's columns in order as the server described
 * them) that the top-level SELECT groups by, or undefined.
 */
export async function sourceGrouping(sql: string, outputs: readonly string[]): Promise<string[] | undefined> {
  let tree;
  try {
    tree = await parsePg(sql);
  } catch {
    return undefined;
  }
  const select = (tree.stmts?.[0]?.stmt as { SelectStmt?: PgNode } | undefined)?.SelectStmt;
  if (!select || (select.op !== undefined && select.op !== 'SETOP_NONE')) return undefined;
  const targets = (select.targetList as { ResTarget?: PgNode }[] | undefined) ?? [];
  const groups = (select.groupClause as PgNode[] | undefined) ?? [];
  if (groups.length === 0 || targets.length !== outputs.length) return undefined;
  const values = targets.map((t) => t.ResTarget?.val);
  if (values.some((v) => shape(v).includes('"A_Star"'))) return undefined;
  const names = targets.map((t) => t.ResTarget?.name);
  const picked: string[] = [];
  for (const group of groups) {
    let index: number;
    const constant = (group.A_Const as { ival?: { ival?: number } } | undefined)?.ival;
    if (group.A_Const) {
      index = (constant?.ival ?? 0) - 1;
    } else {
      const column = group.ColumnRef as { fields?: { String?: { sval?: string } }[] } | undefined;
      const single = column?.fields?.length === 1 ? column.fields[0]?.String?.sval : undefined;
      index = values.findIndex((v) => shape(v) === shape(group));
      // `group by refund_date` where refund_date is an output alias (PostgreSQL allows it).
      if (index < 0 && single !== undefined) index = names.findIndex((n) => n === single);
    }
    const name = outputs[index];
    if (index < 0 || name === undefined) return undefined;
    if (!picked.includes(name)) picked.push(name);
  }
  return picked;
}
