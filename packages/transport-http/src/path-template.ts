import { InvalidRequestError, ValueError } from '@agent/core';
import { routeKey } from '@agent/server/node';

/** A parameter name: what may stand between the braces of a `{name}` segment. */
const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * An endpoint path whose `{name}` segments are parameters, such as `/tasks/{id}/events`. A parameter
 * matches one non-empty path segment as it was sent (still percent-encoded: a client sends a `/`
 * inside a value as `%2F`); every other segment matches only itself. One trailing slash does not
 * count, as for every route; a second one is an empty segment, which matches nothing.
 */
export class PathTemplate {
  /** The path without its trailing slash. */
  readonly key: string;
  /** The parameter names, in path order. */
  readonly names: readonly string[];
  /** Each segment of the key: its fixed text, or `undefined` where a parameter stands. */
  private readonly fixed: readonly (string | undefined)[];

  private constructor(key: string, fixed: (string | undefined)[], names: string[]) {
    this.key = key;
    this.fixed = fixed;
    this.names = names;
  }

  /**
   * Reads an endpoint path. ValueError for a path that does not start with `/`, a segment with a
   * brace that is not a whole `{name}` (a letter or `_`, then letters, digits, `_`), or a name given twice.
   */
  static parse(path: string): PathTemplate {
    if (typeof path !== 'string' || !path.startsWith('/')) {
      throw new ValueError(`An endpoint path must start with "/", got ${JSON.stringify(path)}`);
    }
    const key = routeKey(path);
    const fixed: (string | undefined)[] = [];
    const names: string[] = [];
    for (const segment of key.split('/')) {
      if (!segment.includes('{') && !segment.includes('}')) {
        fixed.push(segment);
        continue;
      }
      const name = segment.slice(1, -1);
      if (!segment.startsWith('{') || !segment.endsWith('}') || !PARAMETER_NAME.test(name)) {
        throw new ValueError(
          `Endpoint path ${path}: a segment with a brace must be one whole {name} parameter, got "${segment}"`,
        );
      }
      if (names.includes(name))
        throw new ValueError(`Endpoint path ${path} names the parameter {${name}} twice`);
      names.push(name);
      fixed.push(undefined);
    }
    return new PathTemplate(key, fixed, names);
  }

  /** The key with every parameter written `{}`: two templates of one shape match exactly the same paths. */
  get shape(): string {
    return this.fixed.map((segment) => segment ?? '{}').join('/');
  }

  /**
   * The raw (percent-encoded) value of each parameter, in the order of {@link names}, when the route
   * key split at `/` (`segments`) matches; undefined when it does not.
   */
  match(segments: readonly string[]): string[] | undefined {
    const fixed = this.fixed;
    if (segments.length !== fixed.length) return undefined;
    const values: string[] = [];
    for (let i = 0; i < fixed.length; i++) {
      const expected = fixed[i];
      const segment = segments[i]!;
      if (expected === undefined) {
        if (segment === '') return undefined;
        values.push(segment);
      } else if (segment !== expected) {
        return undefined;
      }
    }
    return values;
  }

  /**
   * The parameters of a request path (its target without the query), percent-decoded; undefined
   * when the path does not match. InvalidRequestError for a malformed percent-escape.
   */
  params(path: string): Record<string, string> | undefined {
    const values = this.match(routeKey(path).split('/'));
    if (!values) return undefined;
    // A Map, then fromEntries: a parameter named `__proto__` stays a field, never the prototype.
    const params = new Map<string, string>();
    this.names.forEach((name, i) => {
      try {
        params.set(name, decodeURIComponent(values[i]!));
      } catch {
        throw new InvalidRequestError(`Malformed percent-encoding in the {${name}} segment of the path`);
      }
    });
    return Object.fromEntries(params);
  }

  /** True when some request path matches both templates. */
  overlaps(other: PathTemplate): boolean {
    if (other.fixed.length !== this.fixed.length) return false;
    return this.fixed.every((segment, i) => {
      const theirs = other.fixed[i];
      return segment === undefined || theirs === undefined || segment === theirs;
    });
  }

  /**
   * Which of two overlapping templates takes a path both match: the one with a fixed segment where
   * the other has its first parameter (`/tasks/cancel` over `/tasks/{id}`, `/a/{x}` over `/{y}/b`).
   * Negative when this one wins, positive when `other` does, 0 for the same shape (or no overlap at all).
   */
  precedence(other: PathTemplate): number {
    const length = Math.min(this.fixed.length, other.fixed.length);
    for (let i = 0; i < length; i++) {
      const mine = this.fixed[i] === undefined;
      const theirs = other.fixed[i] === undefined;
      if (mine !== theirs) return mine ? 1 : -1;
    }
    return 0;
  }
}
