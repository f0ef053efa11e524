/**
 * Finds statements that join tenant tables without tying them to one organization: what a
 * database sharded by organization_id (Citus) could not run on one shard. Statements are parsed
 * by PostgreSQL's own parser (libpg-query), not matched by pattern.
 *
 * The rule, per statement: every occurrence of a tenant table read by it (FROM, JOIN, USING of a
 * DELETE, FROM of an UPDATE, subqueries, CTEs, set operations; not an INSERT's target, which one
 * row's own organization_id places) must be in one class, where two occurrences are in one
 * class when an `=` between their organization_id columns, a `JOIN … USING (organization_id)`,
 * or an `=` of both to the same value (the same bound parameter value, literal,
 * `current_setting('app.organization_id')`, or a SQL function's argument) holds as a conjunct of
 * a WHERE or ON clause. Conjuncts under OR or NOT prove nothing and are not used; `= ANY(…)` does
 * not pin one organization. Subqueries and CTEs pass their output organization_id to the
 * alias they are read under.
 *
 * Conservative on purpose: a statement it cannot prove is reported, with its text, for a person
 * to judge; a reported statement is fixed (add the equality) or the table is declared a
 * reference table with its reason.
 */
import { loadModule, parseSync } from "libpg-query";

export interface JoinCheckOptions {
  /** Tables with organization_id that are sharded (the catalog's, less the reference tables). */
  tenantTables: ReadonlySet<string>;
}

export interface StatementToCheck {
  text: string;
  /** The bound values of $1, $2, …; absent (a function body): parameters are compared by number. */
  values?: readonly unknown[];
  /** A SQL function body's argument names: a bare reference to one is a value, like a parameter. */
  argumentNames?: readonly string[];
}

export interface CrossOrganizationJoin {
  text: string;
  /** The tenant tables of the statement, grouped by the organization each group is tied to. */
  groups: string[][];
}

type Json = Record<string, unknown>;
/** What a (sub)statement gives the query around it: the node of its organization_id column, and of each output column in order. */
interface Output {
  organization: number | null;
  columns: (number | null)[];
}
const NO_OUTPUT: Output = { organization: null, columns: [] };
interface Entry {
  /** The name a column reference qualifies it by (alias, or the table's name). */
  name: string;
  /** The node of its organization_id column; null when it has none we can follow. */
  node: number | null;
  /** A tenant table's occurrence (counted by the rule), as opposed to a derived table. */
  table: string | null;
}

export async function loadSqlParser(): Promise<void> {
  await loadModule();
}

/** Statements of `statements` that join tenant tables of possibly different organizations. */
export function crossOrganizationJoins(statements: readonly StatementToCheck[], options: JoinCheckOptions): CrossOrganizationJoin[] {
  const found: CrossOrganizationJoin[] = [];
  for (const statement of statements) {
    for (const { stmt } of parseSync(statement.text).stmts as { stmt: Json }[]) {
      const groups = new StatementAnalysis(options.tenantTables, statement.values, statement.argumentNames ?? []).groupsOf(stmt);
      if (groups.length > 1) found.push({ text: statement.text, groups });
    }
  }
  return found;
}

/** The tenant tables a statement reads or changes (an INSERT's target included), for coverage checks. */
export function tenantTablesOf(text: string, tenantTables: ReadonlySet<string>): string[] {
  const names = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== "object") return;
    // A RangeVar in FROM, or the bare one an INSERT, UPDATE or DELETE names as its `relation`.
    for (const rangeVar of [(node as Json).RangeVar, (node as Json).relation] as (Json | undefined)[]) {
      if (rangeVar && tenantTables.has(rangeVar.relname as string)) names.add(rangeVar.relname as string);
    }
    Object.values(node).forEach(visit);
  };
  visit(parseSync(text).stmts);
  return [...names];
}

class StatementAnalysis {
  private readonly parent: number[] = [];
  private readonly values = new Map<string, number>();
  private readonly tables: { table: string; node: number }[] = [];
  /** Subqueries already walked as the right side of an `IN`, so the generic walk does not count them twice. */
  private readonly walked = new WeakSet<object>();

  constructor(
    private readonly tenantTables: ReadonlySet<string>,
    private readonly bound: readonly unknown[] | undefined,
    private readonly argumentNames: readonly string[],
  ) {}

  groupsOf(stmt: Json): string[][] {
    this.statement(stmt, [], new Map());
    const groups = new Map<number, string[]>();
    for (const { table, node } of this.tables) {
      const root = this.find(node);
      groups.set(root, [...(groups.get(root) ?? []), table]);
    }
    return [...groups.values()];
  }

  // Private: union-find over organization_id nodes.
  private node(): number {
    this.parent.push(this.parent.length);
    return this.parent.length - 1;
  }
  private find(node: number): number {
    while (this.parent[node] !== node) node = this.parent[node] = this.parent[this.parent[node]!]!;
    return node;
  }
  private union(a: number | null, b: number | null): void {
    if (a !== null && b !== null) this.parent[this.find(a)] = this.find(b);
  }
  private valueNode(key: string): number {
    let node = this.values.get(key);
    if (node === undefined) this.values.set(key, (node = this.node()));
    return node;
  }

  /** Any statement; returns the node of its output organization_id column (for subqueries and CTEs). */
  private statement(node: Json, scopes: Entry[][], ctes: Map<string, number | null>): Output {
    const [kind, body] = Object.entries(node)[0] as [string, Json];
    if (!body || typeof body !== "object" || this.walked.has(body)) return NO_OUTPUT;
    this.walked.add(body);
    const withClause = body.withClause as Json | undefined;
    if (withClause) {
      ctes = new Map(ctes);
      for (const cte of (withClause.ctes as Json[]) ?? []) {
        const c = cte.CommonTableExpr as Json;
        ctes.set(c.ctename as string, this.statement(c.ctequery as Json, scopes, ctes).organization);
      }
    }
    if (kind === "SelectStmt") return this.select(body, scopes, ctes);
    const scope: Entry[] = [];
    if (kind === "UpdateStmt" || kind === "DeleteStmt") {
      this.fromItem({ RangeVar: body.relation }, scope, scopes, ctes);
      for (const item of ((body.fromClause ?? body.usingClause) as Json[] | undefined) ?? []) this.fromItem(item, scope, scopes, ctes);
      this.conjuncts(body.whereClause, [...scopes, scope], ctes);
    }
    if (kind === "InsertStmt" && body.selectStmt) this.statement(body.selectStmt as Json, scopes, ctes);
    this.nested(body, [...scopes, scope], ctes, new Set(["withClause", "relation", "fromClause", "usingClause", "selectStmt"]));
    return NO_OUTPUT;
  }

  private select(body: Json, scopes: Entry[][], ctes: Map<string, number | null>): Output {
    if (body.op && body.op !== "SETOP_NONE") {
      // UNION and friends: each side on its own; their output columns are one column.
      const left = this.statement({ SelectStmt: body.larg }, scopes, ctes);
      const right = this.statement({ SelectStmt: body.rarg }, scopes, ctes);
      this.union(left.organization, right.organization);
      return { organization: left.organization ?? right.organization, columns: left.columns.map((column, i) => column ?? right.columns[i] ?? null) };
    }
    const scope: Entry[] = [];
    for (const item of (body.fromClause as Json[] | undefined) ?? []) this.fromItem(item, scope, scopes, ctes);
    const inner = [...scopes, scope];
    this.conjuncts(body.whereClause, inner, ctes);
    this.nested(body, inner, ctes, new Set(["withClause", "fromClause", "larg", "rarg"]));
    // The output columns we can follow (organization_id columns, values), and organization_id among them.
    let organization: number | null = null;
    const columns: (number | null)[] = [];
    for (const target of (body.targetList as Json[] | undefined) ?? []) {
      const t = target.ResTarget as Json;
      const ref = (t.val as Json | undefined)?.ColumnRef as Json | undefined;
      const fields = ((ref?.fields as Json[] | undefined) ?? []).map((f) => (f.String as Json | undefined)?.sval as string | undefined);
      const node = this.operand(t.val as Json, inner);
      columns.push(node);
      if ((t.name ?? fields.at(-1)) === "organization_id") organization ??= node;
      if (ref && (ref.fields as Json[]).some((f) => "A_Star" in f)) {
        // SELECT * / alias.*: organization_id passes through from the one table that has it.
        const named = fields.length > 1 ? scope.filter((e) => e.name === fields[0]) : scope;
        const withColumn = named.filter((e) => e.node !== null);
        if (withColumn.length === 1) organization ??= withColumn[0]!.node;
      }
    }
    return { organization, columns };
  }

  /** One FROM item into `scope`: tables, joins (their USING and ON), subqueries, functions. */
  private fromItem(item: Json, scope: Entry[], scopes: Entry[][], ctes: Map<string, number | null>): void {
    if (item.RangeVar) {
      const rv = item.RangeVar as Json;
      const relname = rv.relname as string;
      const name = ((rv.alias as Json | undefined)?.aliasname as string | undefined) ?? relname;
      if (!rv.schemaname && ctes.has(relname)) return void scope.push({ name, node: ctes.get(relname)!, table: null });
      const node = this.node();
      if (this.tenantTables.has(relname)) this.tables.push({ table: relname, node });
      scope.push({ name, node, table: this.tenantTables.has(relname) ? relname : null });
    } else if (item.JoinExpr) {
      const join = item.JoinExpr as Json;
      const left: Entry[] = [];
      const right: Entry[] = [];
      this.fromItem(join.larg as Json, left, scopes, ctes);
      this.fromItem(join.rarg as Json, right, [...scopes, left], ctes);
      scope.push(...left, ...right);
      const using = ((join.usingClause as Json[] | undefined) ?? []).map((f) => (f.String as Json).sval);
      if (using.includes("organization_id")) {
        const side = (entries: Entry[]) => entries.find((e) => e.node !== null)?.node ?? null;
        this.union(side(left), side(right));
      }
      // An outer join's ON still ties the rows it joins; a missing match joins nothing.
      this.conjuncts(join.quals, [...scopes, scope], ctes);
      this.nested({ quals: join.quals }, [...scopes, scope], ctes, new Set());
    } else if (item.RangeSubselect) {
      const sub = item.RangeSubselect as Json;
      const lateral = sub.lateral ? [...scopes, scope] : scopes;
      const node = this.statement(sub.subquery as Json, lateral, ctes).organization;
      scope.push({ name: ((sub.alias as Json | undefined)?.aliasname as string | undefined) ?? "", node, table: null });
    } else if (item.RangeFunction) {
      const fn = item.RangeFunction as Json;
      this.nested(fn, [...scopes, scope], ctes, new Set());
      scope.push({ name: ((fn.alias as Json | undefined)?.aliasname as string | undefined) ?? "", node: null, table: null });
    }
  }

  /** Walks everything but `skip` for nested statements (sublinks in WHERE, targets, HAVING, …). */
  private nested(node: unknown, scopes: Entry[][], ctes: Map<string, number | null>, skip: ReadonlySet<string>): void {
    if (Array.isArray(node)) return node.forEach((n) => this.nested(n, scopes, ctes, new Set()));
    if (!node || typeof node !== "object") return;
    for (const [key, value] of Object.entries(node)) {
      if (skip.has(key)) continue;
      if (key === "SelectStmt" || key === "UpdateStmt" || key === "DeleteStmt" || key === "InsertStmt") this.statement({ [key]: value }, scopes, ctes);
      else this.nested(value, scopes, ctes, new Set());
    }
  }

  /** The `=` conjuncts of a WHERE or ON clause (AND only). */
  private conjuncts(clause: unknown, scopes: Entry[][], ctes: Map<string, number | null>): void {
    if (!clause || typeof clause !== "object") return;
    const c = clause as Json;
    const bool = c.BoolExpr as Json | undefined;
    if (bool) {
      if (bool.boolop === "AND_EXPR") for (const arg of bool.args as Json[]) this.conjuncts(arg, scopes, ctes);
      return;
    }
    const sublink = c.SubLink as Json | undefined;
    if (sublink?.subLinkType === "ANY_SUBLINK" && (!sublink.operName || ((sublink.operName as Json[])[0]!.String as Json).sval === "=")) {
      // `x IN (SELECT y …)` and `(a, b) IN (SELECT c, d …)`: each left value equals its column.
      const left = (sublink.testexpr as Json).RowExpr ? (((sublink.testexpr as Json).RowExpr as Json).args as Json[]) : [sublink.testexpr as Json];
      const output = this.statement(sublink.subselect as Json, scopes, ctes);
      left.forEach((operand, i) => this.union(this.operand(operand, scopes), output.columns[i] ?? null));
      return;
    }
    const expr = c.A_Expr as Json | undefined;
    if (!expr || expr.kind !== "AEXPR_OP" || ((expr.name as Json[])[0]!.String as Json).sval !== "=") return;
    // `(a, b) = (c, d)` (how Prisma joins on a compound foreign key): a = c and b = d.
    const leftRow = (expr.lexpr as Json | undefined)?.RowExpr as Json | undefined;
    const rightRow = (expr.rexpr as Json | undefined)?.RowExpr as Json | undefined;
    if (leftRow && rightRow) {
      const right = rightRow.args as Json[];
      (leftRow.args as Json[]).forEach((operand, i) => this.union(this.operand(operand, scopes), this.operand(right[i], scopes)));
      return;
    }
    this.union(this.operand(expr.lexpr as Json, scopes), this.operand(expr.rexpr as Json, scopes));
  }

  /** The node an operand of `=` stands for: an organization_id column, or a value one is pinned to. */
  private operand(operand: Json | undefined, scopes: Entry[][]): number | null {
    if (!operand) return null;
    if (operand.TypeCast) return this.operand((operand.TypeCast as Json).arg as Json, scopes);
    if (operand.ParamRef) {
      const number = (operand.ParamRef as Json).number as number;
      return this.valueNode(this.bound ? `value:${JSON.stringify(this.bound[number - 1])}` : `param:${number}`);
    }
    if (operand.A_Const) {
      const constant = operand.A_Const as Json;
      return constant.sval ? this.valueNode(`value:${JSON.stringify((constant.sval as Json).sval)}`) : null;
    }
    if (operand.FuncCall) {
      const fn = operand.FuncCall as Json;
      const name = (fn.funcname as Json[]).map((f) => (f.String as Json).sval).join(".");
      const arg = ((fn.args as Json[] | undefined) ?? [])[0]?.A_Const as Json | undefined;
      const setting = (arg?.sval as Json | undefined)?.sval;
      return /(^|\.)current_setting$/.test(name) && setting === "app.organization_id" ? this.valueNode("setting:app.organization_id") : null;
    }
    if (operand.ColumnRef) {
      const fields = ((operand.ColumnRef as Json).fields as Json[]).map((f) => (f.String as Json | undefined)?.sval as string | undefined);
      const column = fields.at(-1);
      const qualifier = fields.length > 1 ? fields.at(-2) : undefined;
      // A SQL function's argument referred to by name: a value.
      if (fields.length === 1 && column && this.argumentNames.includes(column)) return this.valueNode(`argument:${column}`);
      if (column !== "organization_id") return null;
      for (let i = scopes.length - 1; i >= 0; i--) {
        const candidates = qualifier ? scopes[i]!.filter((e) => e.name === qualifier) : scopes[i]!.filter((e) => e.node !== null);
        if (candidates.length === 1) return candidates[0]!.node;
        if (candidates.length > 1) return null;
      }
    }
    return null;
  }
}
