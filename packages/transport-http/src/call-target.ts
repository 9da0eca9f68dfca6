import { ValidationError, ValueError, type ClientRequestSpec } from '@agent/core';
import { httpEndpointUrl, isRecord } from '@agent/core/internal';

/** Where one call goes and what it sends. */
export interface CallTarget {
  url: string;
  /** The JSON body of a POST or PUT; undefined for GET and DELETE, which carry their fields in the URL. */
  body: unknown;
}

/** A `{name}` placeholder of an operation's path. */
const PLACEHOLDER = /\{([^/{}]+)\}/g;

/**
 * The URL and body of one call below `baseUrl`. Each `{x}` placeholder of the path is filled from
 * `params[x]`, else from the field `data[x]` (a non-empty string, percent-encoded so that any value,
 * a `/` too, stays one segment), and that parameter or field is not sent again in the query or the
 * body. The task routes' `{id}` also takes `data.task_id`, its usual name. `params` are the query.
 * GET and DELETE carry every other `data` field with a value as a query parameter (strings as they
 * are, anything else as JSON: `5`, `true`); POST and PUT send `data` as the JSON body (`{}` without).
 */
export function callTarget(
  spec: ClientRequestSpec,
  baseUrl: string,
  data: unknown,
  params?: Record<string, string>,
): CallTarget {
  const query: Record<string, string> = { ...params };
  // Copied only when a field leaves it: the body of a POST is usually sent as it came.
  let fields: Record<string, unknown> | undefined;
  const take = (name: string): unknown => {
    if (!isRecord(data)) return undefined;
    fields ??= { ...data };
    const value = fields[name];
    delete fields[name];
    return value;
  };
  const path = spec.path.replace(PLACEHOLDER, (_match, name: string) => {
    let value: unknown;
    if (params !== undefined && Object.prototype.hasOwnProperty.call(params, name)) {
      value = params[name];
      delete query[name];
    } else if (name === 'id') {
      const taskId = take('task_id');
      const id = take('id');
      value = taskId ?? id;
      name = 'task_id';
    } else {
      value = take(name);
    }
    return encodeURIComponent(segmentOf(spec, name, value));
  });
  const method = spec.method;
  if (method === 'POST' || method === 'PUT') {
    return {
      url: httpEndpointUrl('HTTPTransport', baseUrl, path, query).href,
      body: fields ?? data ?? {},
    };
  }
  const remaining = fields ?? (isRecord(data) ? data : {});
  for (const [name, value] of Object.entries(remaining)) {
    if (value === undefined || value === null) continue;
    query[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return { url: httpEndpointUrl('HTTPTransport', baseUrl, path, query).href, body: undefined };
}

/**
 * The value a path segment can carry. A missing one is refused as the server refuses a missing
 * field; `.` and `..` are refused because every URL parser (axios's included) resolves them as dot
 * segments, so the request would reach another route.
 */
function segmentOf(spec: ClientRequestSpec, name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') {
    const message =
      value === undefined || value === null || value === '' ? 'is required' : 'must be a string';
    throw new ValidationError(`Invalid ${spec.name} request: /${name} ${message}`, {
      data: { errors: [{ pointer: `/${name}`, message }] },
    });
  }
  if (value === '.' || value === '..') {
    const what = name === 'task_id' ? 'task id' : `{${name}} value`;
    throw new ValueError(
      `HTTPTransport cannot address ${what} "${value}": a URL path resolves it as a dot segment`,
    );
  }
  return value;
}
