/**
 * Messages between `client.sync` and its worker thread. Values cross by structured clone, so
 * errors travel as their wire body and are rebuilt on the other side with `AgentError.fromJSON`.
 */
import type { MessagePort } from 'node:worker_threads';
import { AgentError, isErrorCode, type ComponentDescriptor, type ErrorBody } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import type { RetryOption } from './retry-options.js';

export const SYNC_OPERATIONS = [
  'sendTask',
  'sendMessage',
  'cancelTask',
  'getAgentCard',
  'streamTask',
  'getTask',
  'listTasks',
] as const;
export type SyncOperation = (typeof SYNC_OPERATIONS)[number];

export interface SyncWorkerData {
  /** The transport's descriptor, modules already resolved to absolute paths. */
  transport: ComponentDescriptor;
  baseUrl: string;
  /** Int32Array over a SharedArrayBuffer: index 0 counts responses, so the caller can Atomics.wait on it. */
  signal: Int32Array;
  port: MessagePort;
}

export interface SyncRequest {
  id: number;
  op: SyncOperation;
  args: unknown[];
  /** The call's complete retry setting, already checked by the calling thread. */
  retry: RetryOption;
  /** When the calling thread gives up waiting (epoch ms): no retry waits past it. */
  deadline: number;
}

export type SyncResponse =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; error: ErrorBody };

/**
 * The wire body of any thrown value. Duck-typed on `code`, because the error may come from another
 * copy of `@agent/core` than the one loaded here.
 */
export function errorBody(error: unknown): ErrorBody {
  if (isRecord(error) && isErrorCode(error.code) && typeof error.message === 'string') {
    return error.data === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, data: error.data };
  }
  return AgentError.from(error).toJSON();
}
