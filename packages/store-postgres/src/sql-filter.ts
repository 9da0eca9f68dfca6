/** A WHERE clause built from conditions, with numbered parameters (`$1`, `$2`, …) in order. */
export class SqlFilter {
  readonly clauses: string[] = [];

  /** `params` may be another filter's, when this one is nested inside it and numbers after it. */
  constructor(readonly params: unknown[] = []) {}

  /** Adds a parameter and returns its placeholder. */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  equal(column: string, value: unknown): this {
    this.clauses.push(`${column} = ${this.param(value)}`);
    return this;
  }

  add(clause: string): this {
    this.clauses.push(clause);
    return this;
  }

  where(): string {
    return this.clauses.length === 0 ? '' : `WHERE ${this.clauses.join(' AND ')}`;
  }
}
