import { ValueError } from '@agent/core';

/** The URL scheme of in-process addresses. */
export const RUNTIME_SCHEME = 'runtime://';

/** The `runtime://<name>` URL of an agent name. */
export function runtimeUrl(name: string): string {
  return `${RUNTIME_SCHEME}${name}`;
}

/**
 * The lookup key of an address: surrounding whitespace and trailing slashes go, so `runtime://a/`
 * and `runtime://a` (or `http://h:1/` and `http://h:1`) name the same agent.
 */
export function addressKey(address: string): string {
  return address.trim().replace(/\/+$/, '');
}

/** Checks a name given to `registerAgent`: non-empty, no slash (it becomes a URL segment). */
export function checkAgentName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '') {
    throw new ValueError(
      'Agent name must be a non-empty string: pass options.name or give the agent a card name',
    );
  }
  if (name.includes('/')) throw new ValueError(`Agent name must not contain "/": ${name}`);
  return name.trim();
}
