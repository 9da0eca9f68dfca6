/**
 * The run store's query arguments, checked and normalized by the rules of the other backends of
 * `@agent/events` (the shared suite holds every backend to them).
 */
import { ValueError } from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
import type {
  RunReportQuery,
  TaskEventQuery,
  TaskOwner,
  TaskPageQuery,
  TaskRecordQuery,
} from '@agent/events';
import { DEFAULT_OWNER } from '@agent/events';
import { DEFAULT_PAGE_SIZE, limitOf, MAX_PAGE_SIZE, optionalFilter, ownerOf, strip } from './arguments.js';
import { decodePageToken, encodePageToken, queryFingerprint } from './page-token.js';

export interface NormalizedTaskQuery {
  owner: TaskOwner;
  session_id?: string;
  state?: string;
  run_id?: string;
  trace_id?: string;
  agent_name?: string;
  limit?: number;
}

export function taskQueryOf(query: TaskRecordQuery | undefined): NormalizedTaskQuery {
  if (query === undefined || query === null) return { owner: DEFAULT_OWNER };
  if (!isRecord(query)) throw new ValueError('The query must be an object');
  const q = query as Record<string, unknown>;
  return strip({
    owner: ownerOf(q.owner),
    session_id: optionalFilter(q, 'sessionId'),
    state: optionalFilter(q, 'state'),
    run_id: optionalFilter(q, 'runId'),
    trace_id: optionalFilter(q, 'traceId'),
    agent_name: optionalFilter(q, 'agentName'),
    limit: limitOf(q.limit),
  });
}

export interface NormalizedReportQuery {
  session_id?: string;
  trace_id?: string;
  agent_name?: string;
  task_id?: string;
  limit?: number;
}

export function reportQueryOf(query: RunReportQuery | undefined): NormalizedReportQuery {
  if (query === undefined || query === null) return {};
  if (!isRecord(query)) throw new ValueError('The query must be an object');
  const q = query as Record<string, unknown>;
  return strip({
    session_id: optionalFilter(q, 'sessionId'),
    trace_id: optionalFilter(q, 'traceId'),
    agent_name: optionalFilter(q, 'agentName'),
    task_id: optionalFilter(q, 'taskId'),
    limit: limitOf(q.limit),
  });
}

const PAGE_QUERY_NAMES = optionNames<TaskPageQuery>({
  owner: true,
  sessionId: true,
  state: true,
  pageSize: true,
  pageToken: true,
});

/** Where a page starts: after this row of the order `updated_at` descending, `task_id` ascending. */
export interface PageCursor {
  updated_at: string;
  task_id: string;
}

export interface NormalizedPageQuery {
  owner: TaskOwner;
  session_id?: string;
  state?: string;
  page_size: number;
  after?: PageCursor;
}

/**
 * Binds a token to its owner and filters without putting them in the token: a token replayed by
 * another owner or with other filters no longer matches.
 */
function fingerprint(q: Omit<NormalizedPageQuery, 'page_size' | 'after'>): string {
  return queryFingerprint([q.owner.tenant, q.owner.principal_id, q.session_id ?? null, q.state ?? null]);
}

export function pageQueryOf(query: TaskPageQuery | undefined): NormalizedPageQuery {
  const q = (query ?? {}) as Record<string, unknown>;
  if (!isRecord(q)) throw new ValueError('The query must be an object');
  checkOptionNames('pageTaskRecords', q, PAGE_QUERY_NAMES);
  const base = strip({
    owner: ownerOf(q.owner),
    session_id: optionalFilter(q, 'sessionId'),
    state: optionalFilter(q, 'state'),
  });
  const token = optionalFilter(q, 'pageToken');
  let after: PageCursor | undefined;
  if (token !== undefined && token !== '') {
    const [updatedAt, taskId] = decodePageToken(token, fingerprint(base), 2) as [string, string];
    after = { updated_at: updatedAt, task_id: taskId };
  }
  return strip({
    ...base,
    page_size: limitOf(q.pageSize, 'pageSize', MAX_PAGE_SIZE) ?? DEFAULT_PAGE_SIZE,
    after,
  });
}

/** The opaque token of the page after `last` (base64url JSON). */
export function pageTokenOf(query: NormalizedPageQuery, last: PageCursor): string {
  return encodePageToken(fingerprint(query), [last.updated_at, last.task_id]);
}

const EVENT_QUERY_NAMES = optionNames<TaskEventQuery>({ after: true, limit: true });

export interface NormalizedEventQuery {
  after: number;
  limit?: number;
}

export function eventQueryOf(query: TaskEventQuery | undefined): NormalizedEventQuery {
  const q = (query ?? {}) as Record<string, unknown>;
  if (!isRecord(q)) throw new ValueError('The query must be an object');
  checkOptionNames('listTaskEvents', q, EVENT_QUERY_NAMES);
  const after = q.after ?? 0;
  if (typeof after !== 'number' || !Number.isInteger(after) || after < 0)
    throw new ValueError(`after must be a non-negative integer, got ${JSON.stringify(after)}`, {
      data: { field: 'after' },
    });
  return strip({ after, limit: limitOf(q.limit) });
}
