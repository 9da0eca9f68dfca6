/**
 * Loading optional peer dependencies on first use, so that importing this package never needs
 * them and a missing one fails with an instruction instead of a MODULE_NOT_FOUND stack.
 */
import { createRequire } from 'node:module';
import { UnavailableError } from '@agent/core';

const load = createRequire(__filename);

/**
 * `require(name)`, or an UnavailableError that names the feature and the install command.
 * @throws UnavailableError when the module cannot be resolved.
 */
export function requireOptionalPeer<T>(name: string, feature: string, range: string): T {
  try {
    return load(name) as T;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') {
      throw new UnavailableError(
        `${feature} needs the optional peer dependency ${name}@${range}; install it with \`pnpm add ${name}@${range}\``,
        {
          data: { dependency: name, range },
          cause: error,
        },
      );
    }
    throw new UnavailableError(`${feature} could not load ${name}: ${(error as Error).message}`, {
      data: { dependency: name, range },
      cause: error,
    });
  }
}
