import { createRequire } from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';
import { ValueError, type JsonObject } from '@agent/core';

/**
 * Loads an optional package of the user's (a transport, the registry client) that the runtime
 * deliberately does not depend on. A package manager with strict `node_modules` (pnpm) installs it
 * beside the user's program, not beside the runtime: so it is resolved from where the program is
 * first (`searchFrom`), and from the runtime itself last.
 *
 * `what` starts the error messages (`transport: 'grpc'`, `registry`); `data` goes on the ValueError
 * beside `package`.
 */
export function requirePackage(
  what: string,
  moduleName: string,
  searchFrom: readonly string[],
  data: JsonObject = {},
): Record<string, unknown> {
  for (const from of searchFrom) {
    const load = createRequire(from);
    let path: string;
    try {
      path = load.resolve(moduleName);
    } catch {
      continue;
    }
    try {
      return load(path) as Record<string, unknown>;
    } catch (error) {
      throw new ValueError(`${what} found ${moduleName} but could not load it: ${(error as Error).message}`, {
        cause: error,
        data: { ...data, package: moduleName },
      });
    }
  }
  const places = [...new Set(searchFrom.map((from) => dirname(from)))].join(', ');
  throw new ValueError(
    `${what} needs the ${moduleName} package, which is not installed where this program ` +
      `runs (looked from ${places}): add it to your project, e.g. pnpm add ${moduleName}`,
    { data: { ...data, package: moduleName } },
  );
}

/** Where the user's program is: the main module, the script node was started with, the working directory. */
export function defaultSearchPaths(): string[] {
  const paths: string[] = [];
  if (require.main?.filename) paths.push(require.main.filename);
  const script = process.argv[1];
  if (script && isAbsolute(script)) paths.push(script);
  // createRequire takes a file path; the file need not exist, only its directory matters.
  paths.push(join(process.cwd(), 'package.json'));
  paths.push(__filename);
  return paths;
}
