/** Header containers accepted by {@link extractCredentials}. */
export type HeaderSource =
  | { get(name: string): string | null | undefined }
  | Readonly<Record<string, string | string[] | undefined>>
  | Iterable<readonly [string, string]>;

export type QuerySource =
  URLSearchParams | Readonly<Record<string, string | string[] | undefined>> | null | undefined;

const STRIPPED_PREFIXES = ['bearer', 'basic', 'apikey'];

/** The query parameters a credential may arrive in, in the order they are consulted. */
export const CREDENTIAL_QUERY_PARAMS: readonly string[] = Object.freeze(['api_key', 'apikey', 'token']);

function own(record: object, key: string): unknown {
  // Inherited names (`__proto__`, `toString`) never count as a header or parameter.
  return Object.prototype.hasOwnProperty.call(record, key)
    ? (record as Record<string, unknown>)[key]
    : undefined;
}

function firstString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

function hasGetter(value: unknown): value is { get(name: string): unknown } {
  return (
    typeof value === 'object' && value !== null && typeof (value as { get?: unknown }).get === 'function'
  );
}

function readHeader(headers: HeaderSource, name: string): string | undefined {
  if (hasGetter(headers)) {
    return firstString(headers.get(name) ?? headers.get(name.toLowerCase()) ?? undefined);
  }
  if (typeof headers === 'object' && headers !== null && Symbol.iterator in headers) {
    const wanted = name.toLowerCase();
    for (const pair of headers as Iterable<readonly [string, string]>) {
      const [key, value] = pair;
      if (String(key).toLowerCase() === wanted) return firstString(value);
    }
    return undefined;
  }
  if (typeof headers === 'object' && headers !== null) {
    return firstString(own(headers, name) ?? own(headers, name.toLowerCase()));
  }
  // Anything else is malformed: let it fail the way it fails natively.
  return firstString((headers as unknown as { get(name: string): unknown }).get(name));
}

function readQuery(query: QuerySource, name: string): string | undefined {
  if (!query) return undefined;
  if (query instanceof URLSearchParams) return query.get(name) ?? undefined;
  return firstString(own(query, name));
}

/** Removes a case-insensitive `Bearer`, `Basic`, `ApiKey` or `apikey` prefix; other schemes stay unchanged. */
export function stripAuthPrefix(header: string): string {
  const trimmed = header.trim();
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(trimmed);
  if (match && STRIPPED_PREFIXES.includes(match[1]!.toLowerCase())) return (match[2] ?? '').trim();
  return trimmed;
}

/**
 * Finds the caller's credential: (1) the `Authorization` header, prefix removed; (2) `X-API-Key`;
 * (3) query parameters `api_key`, `apikey`, `token`, consulted only when no usable header was found.
 * Returns the stripped string (possibly empty for a prefix-only header), or null when nothing is found.
 * Malformed header objects throw their own native errors.
 */
export function extractCredentials(headers: HeaderSource, queryParams?: QuerySource): string | null {
  const authorization = readHeader(headers, 'Authorization');
  if (authorization !== undefined && authorization.trim() !== '') return stripAuthPrefix(authorization);
  const apiKey = readHeader(headers, 'X-API-Key');
  if (apiKey !== undefined && apiKey.trim() !== '') return apiKey.trim();
  for (const name of CREDENTIAL_QUERY_PARAMS) {
    const value = readQuery(queryParams, name);
    if (value !== undefined && value.trim() !== '') return value.trim();
  }
  if (authorization !== undefined) return stripAuthPrefix(authorization);
  if (apiKey !== undefined) return apiKey.trim();
  return null;
}
