import { ValueError } from '@agent/core';

/**
 * Loads an optional peer of this package on first use, so that the registry never needs it unless
 * a card calls for it. ValueError naming the package to install when it is missing.
 */
export function loadOptional(module: string, why: string): Record<string, unknown> {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(module) as Record<string, unknown>;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const missing = code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND';
    throw new ValueError(
      missing
        ? `${why}, which needs the ${module} package: install it beside @agent/registry (pnpm add ${module})`
        : `${module} could not be loaded: ${(error as Error).message}`,
      { cause: error, data: { package: module } },
    );
  }
}
