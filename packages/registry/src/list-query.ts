/**
 * Decoding `GET /registry/agents?skill=&name=&page_size=&page_token=`, with the conventions of the
 * task API's `list_tasks`: an empty parameter counts as absent, a number arrives as a decimal
 * string, and a bad value is VALIDATION_FAILED naming its parameter. Other parameters are ignored
 * (a credential may travel in the query).
 */
import { ValidationError } from '@agent/core';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './operations.js';

export interface ListAgentsQuery {
  name?: string;
  skill?: string;
  pageSize: number;
  pageToken?: string;
}

const WHAT = 'list_agents request';

export function invalidListQuery(pointer: string, message: string): ValidationError {
  return new ValidationError(`Invalid ${WHAT}: ${pointer} ${message}`, {
    data: { errors: [{ pointer, message }] },
  });
}

/** One value of a parameter; repeating it is refused rather than silently picking one. */
function single(query: URLSearchParams, field: string): string | undefined {
  const values = query.getAll(field);
  if (values.length > 1) throw invalidListQuery(`/${field}`, 'must be given once');
  const value = values[0];
  return value === undefined || value === '' ? undefined : value;
}

export function parseListQuery(query: URLSearchParams): ListAgentsQuery {
  const parsed: ListAgentsQuery = { pageSize: DEFAULT_PAGE_SIZE };
  const name = single(query, 'name');
  if (name !== undefined) parsed.name = name;
  const skill = single(query, 'skill');
  if (skill !== undefined) parsed.skill = skill;
  const pageSize = single(query, 'page_size');
  if (pageSize !== undefined) {
    const value = /^\d{1,3}$/.test(pageSize) ? Number(pageSize) : NaN;
    if (!(value >= 1 && value <= MAX_PAGE_SIZE)) {
      throw invalidListQuery('/page_size', `must be an integer from 1 to ${MAX_PAGE_SIZE}`);
    }
    parsed.pageSize = value;
  }
  const pageToken = single(query, 'page_token');
  if (pageToken !== undefined) parsed.pageToken = pageToken;
  return parsed;
}
