/** A record of a table (an order, a user, a flight…): plain JSON. */
export type Row = Record<string, unknown>;
/** Table name → record id → record. */
export type Tables = Record<string, Record<string, Row>>;

/**
 * A run's view of a shared, frozen database: reads go to the shared copy until a record is
 * edited; the first edit copies that one record. A run costs what it writes, not the size of the
 * database (retail's is 2.8 MB), and the records a run changed are known without a full diff.
 */
export class Database {
  private readonly written = new Map<string, Map<string, Row>>();

  constructor(private readonly base: Readonly<Tables>) {}

  get(table: string, id: string): Readonly<Row> | undefined {
    return this.written.get(table)?.get(id) ?? this.base[table]?.[id];
  }

  /** The record, copied for this run so it may be changed in place. */
  edit(table: string, id: string): Row {
    const own = this.written.get(table)?.get(id);
    if (own) return own;
    const shared = this.base[table]?.[id];
    if (shared === undefined) throw new Error(`no record ${table}[${JSON.stringify(id)}] to edit`);
    return this.put(table, id, structuredClone(shared) as Row);
  }

  insert(table: string, id: string, row: Row): void {
    if (this.get(table, id) !== undefined) {
      throw new Error(`record ${table}[${JSON.stringify(id)}] exists already`);
    }
    this.put(table, id, row);
  }

  /** Every record of a table, in the shared order, then the records this run inserted. */
  *rows(table: string): Generator<Readonly<Row>> {
    const shared = this.base[table] ?? {};
    for (const id of Object.keys(shared)) yield this.get(table, id) as Row;
    for (const [id, row] of this.written.get(table) ?? []) if (!(id in shared)) yield row;
  }

  /** Ids of the records this run edited or inserted, by table. */
  touched(): Map<string, Set<string>> {
    return new Map([...this.written].map(([table, rows]) => [table, new Set(rows.keys())]));
  }

  /** The whole database as this run sees it (records shared where unchanged). */
  state(): Tables {
    const tables: Tables = {};
    for (const table of new Set([...Object.keys(this.base), ...this.written.keys()])) {
      tables[table] = { ...this.base[table], ...Object.fromEntries(this.written.get(table) ?? []) };
    }
    return tables;
  }

  private put(table: string, id: string, row: Row): Row {
    let rows = this.written.get(table);
    if (!rows) {
      rows = new Map();
      this.written.set(table, rows);
    }
    rows.set(id, row);
    return row;
  }
}

/** Freezes a parsed JSON value in place, so a tool that changes a shared record fails loudly. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Where two databases differ, one line per field: `orders["#W1"].status: expected "cancelled",
 * found "pending"`. Only records either run touched are compared (the rest are shared).
 */
export function databaseDifferences(expected: Database, actual: Database): string[] {
  const differences: string[] = [];
  const tables = new Map<string, Set<string>>();
  for (const database of [expected, actual]) {
    for (const [table, ids] of database.touched()) {
      const all = tables.get(table) ?? new Set<string>();
      for (const id of ids) all.add(id);
      tables.set(table, all);
    }
  }
  for (const [table, ids] of [...tables].sort(([a], [b]) => a.localeCompare(b))) {
    for (const id of [...ids].sort()) {
      const where = `${table}[${JSON.stringify(id)}]`;
      const want = expected.get(table, id);
      const found = actual.get(table, id);
      if (want === undefined) differences.push(`${where}: not expected, found a new record`);
      else if (found === undefined) differences.push(`${where}: expected a new record, found none`);
      else compareValues(want, found, where, differences);
    }
  }
  return differences;
}

function compareValues(expected: unknown, found: unknown, path: string, out: string[]): void {
  if (isObject(expected) && isObject(found)) {
    for (const key of new Set([...Object.keys(expected), ...Object.keys(found)])) {
      compareValues(expected[key], found[key], `${path}.${key}`, out);
    }
    return;
  }
  if (Array.isArray(expected) && Array.isArray(found) && expected.length === found.length) {
    expected.forEach((item, index) => {
      compareValues(item, found[index], `${path}[${index}]`, out);
    });
    return;
  }
  if (JSON.stringify(expected) !== JSON.stringify(found)) {
    out.push(`${path}: expected ${describe(expected)}, found ${describe(found)}`);
  }
}

function describe(value: unknown): string {
  return value === undefined ? "nothing" : JSON.stringify(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
