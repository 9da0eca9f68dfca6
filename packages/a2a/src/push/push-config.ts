import { ValidationError, type ValidationIssue } from '@agent/core';
import { isRecord } from '@agent/core/internal';

/** A stored push-notification config: where one task's updates are POSTed and how. */
export interface PushConfig {
  id: string;
  taskId: string;
  url: string;
  /** Sent back verbatim in `X-A2A-Notification-Token` so the receiver can tell the POST is genuine. */
  token?: string;
  /** Sent as `Authorization: <scheme> <credentials>` when credentials are set. */
  authentication?: { scheme: string; credentials?: string };
}

/** The A2A 1.0 ProtoJSON form of a config (`TaskPushNotificationConfig`). */
export interface A2APushConfig {
  tenant?: string;
  id: string;
  taskId: string;
  url: string;
  token?: string;
  authentication?: { scheme: string; credentials?: string };
}

/** A config as a request states it, before its URL is checked and its id minted. */
export interface PushConfigRequest {
  id?: string;
  url: string;
  token?: string;
  authentication?: { scheme: string; credentials?: string };
}

const MAX_ID_LENGTH = 256;
const MAX_VALUE_LENGTH = 4096;
/** RFC 9110 token characters: an auth scheme name. */
const SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII and spaces/tabs: what a header value may carry without being rejected by node. */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

type JsonRecord = Record<string, unknown>;

/** A field by its lowerCamelCase name or its snake_case proto name. */
function field(record: JsonRecord, camel: string): unknown {
  if (record[camel] !== undefined) return record[camel];
  const snake = camel.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
  return record[snake];
}

/**
 * Reads a `TaskPushNotificationConfig` tolerantly: the 1.0 flat form `{id?, taskId?, url, token?,
 * authentication?}`, the 0.3 nesting `{taskId, pushNotificationConfig: {id?, url, token?,
 * authentication?}}` (also as a bare `PushNotificationConfig`), snake_case names, and 0.3's
 * `authentication.schemes[]` (its first entry). A `taskId` in the body must match `taskId`.
 * `tenant` is the caller's business and is ignored here. Problems are one ValidationError listing
 * every pointer (prefixed with `pointer`).
 */
export function parsePushConfig(json: unknown, taskId: string, pointer = ''): PushConfigRequest {
  const issues: ValidationIssue[] = [];
  const problem = (at: string, message: string): void =>
    void issues.push({ pointer: `${pointer}${at}`, message });
  if (!isRecord(json)) {
    throw new ValidationError(`Invalid push notification config: ${pointer || '/'} must be an object`, {
      data: { errors: [{ pointer: pointer || '/', message: 'must be an object' }] },
    });
  }
  const bodyTaskId = field(json, 'taskId');
  if (bodyTaskId !== undefined && bodyTaskId !== '' && bodyTaskId !== taskId)
    problem('/taskId', 'does not match the task of the request');

  let source: JsonRecord = json;
  let at = '';
  const nested = field(json, 'pushNotificationConfig');
  if (nested !== undefined) {
    at = json.pushNotificationConfig !== undefined ? '/pushNotificationConfig' : '/push_notification_config';
    if (isRecord(nested)) source = { ...nested, id: field(nested, 'id') ?? field(json, 'id') };
    else problem(at, 'must be an object');
  }

  const readString = (name: string, max: number, required: boolean): string | undefined => {
    const value = field(source, name);
    if (value === undefined || value === null || (value === '' && !required)) {
      if (required) problem(`${at}/${name}`, 'is required');
      return undefined;
    }
    if (typeof value !== 'string') problem(`${at}/${name}`, 'must be a string');
    else if (value.length > max) problem(`${at}/${name}`, `must be at most ${max} characters`);
    else if (value === '') problem(`${at}/${name}`, 'must not be empty');
    else return value;
    return undefined;
  };

  const id = readString('id', MAX_ID_LENGTH, false);
  const url = readString('url', MAX_VALUE_LENGTH, true);
  const token = readString('token', MAX_VALUE_LENGTH, false);
  if (token !== undefined && !HEADER_VALUE.test(token))
    problem(`${at}/token`, 'must be printable ASCII (it is sent as a header)');

  let authentication: PushConfigRequest['authentication'];
  const auth = field(source, 'authentication');
  if (auth !== undefined && auth !== null) {
    const base = `${at}/authentication`;
    if (!isRecord(auth)) problem(base, 'must be an object');
    else {
      const schemes = auth.schemes;
      const scheme = auth.scheme ?? (Array.isArray(schemes) ? schemes[0] : undefined);
      const credentials = auth.credentials;
      if (typeof scheme !== 'string' || scheme === '') problem(`${base}/scheme`, 'is required');
      else if (!SCHEME.test(scheme) || scheme.length > 64)
        problem(`${base}/scheme`, 'must be an HTTP authentication scheme name');
      if (credentials !== undefined && credentials !== null && credentials !== '') {
        if (typeof credentials !== 'string') problem(`${base}/credentials`, 'must be a string');
        else if (credentials.length > MAX_VALUE_LENGTH || !HEADER_VALUE.test(credentials))
          problem(`${base}/credentials`, 'must be printable ASCII of at most 4096 characters');
      }
      if (typeof scheme === 'string' && scheme !== '') {
        authentication =
          typeof credentials === 'string' && credentials !== '' ? { scheme, credentials } : { scheme };
      }
    }
  }

  if (issues.length > 0 || url === undefined) {
    const summary = issues.map((issue) => `${issue.pointer} ${issue.message}`).join('; ');
    throw new ValidationError(`Invalid push notification config: ${summary}`, { data: { errors: issues } });
  }
  const request: PushConfigRequest = { url };
  if (id !== undefined) request.id = id;
  if (token !== undefined) request.token = token;
  if (authentication) request.authentication = authentication;
  return request;
}

/** The JSON pointer of the URL inside what {@link parsePushConfig} read, for the SSRF refusal. */
export function urlPointerOf(json: unknown, pointer = ''): string {
  if (isRecord(json)) {
    if (json.pushNotificationConfig !== undefined) return `${pointer}/pushNotificationConfig/url`;
    if (json.push_notification_config !== undefined) return `${pointer}/push_notification_config/url`;
  }
  return `${pointer}/url`;
}

/**
 * A config as an A2A answer carries it: camelCase, fields at their default omitted. The token and
 * the authentication credentials are echoed as the owner set them: only that owner can read the
 * config, and A2A clients compare what they read back with what they registered.
 */
export function toA2APushConfig(config: PushConfig, options: { tenant?: string } = {}): A2APushConfig {
  // Key order follows the proto's field order: tenant, id, taskId, url, token, authentication.
  const json: A2APushConfig = options.tenant
    ? { tenant: options.tenant, id: config.id, taskId: config.taskId, url: config.url }
    : { id: config.id, taskId: config.taskId, url: config.url };
  if (config.token !== undefined) json.token = config.token;
  const auth = config.authentication;
  if (auth) {
    json.authentication =
      auth.credentials === undefined
        ? { scheme: auth.scheme }
        : { scheme: auth.scheme, credentials: auth.credentials };
  }
  return json;
}

/** A webhook URL as log lines and attempt reports show it: no query string or fragment. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(invalid url)';
  }
}
