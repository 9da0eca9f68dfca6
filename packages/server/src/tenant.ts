/** The one rule for a tenant name, shared by the pipeline, the clients' `tenant` option and configuration schemas. */

/** The longest tenant name a call may carry. */
export const MAX_TENANT_LENGTH = 128;

/** The characters a tenant name may use, as a JSON Schema `pattern` (configuration schemas use it too). */
export const TENANT_NAME_PATTERN = '^[A-Za-z0-9._:-]*$';

const TENANT_NAME = new RegExp(TENANT_NAME_PATTERN);

/** The rule in words, for error messages (never the value itself). */
export const TENANT_RULE = `at most ${MAX_TENANT_LENGTH} characters of A-Z, a-z, 0-9, ".", "_", ":" and "-"`;

export function isTenantName(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_TENANT_LENGTH && TENANT_NAME.test(value);
}
