import { createRequire } from 'node:module';
import { isAbsolute, join } from 'node:path';
import { ValueError, type ComponentDescriptor } from '@agent/core';
import { isComponentDescriptor, isRecord } from '@agent/core/internal';

/**
 * Rewrites every `$component.module` of a descriptor (nested ones included) to an absolute file
 * path, resolved here on the calling thread: a worker's own `require` starts from this package's
 * folder, where the user's transport package may not be visible. Tried in order: this package,
 * the current directory, the main module's folder.
 */
export function resolveDescriptorModules<T>(value: T): T {
  return mapDescriptors(value, (descriptor) => {
    const { module, exportName, options } = descriptor.$component;
    return {
      $component: { module: resolveModule(module), exportName, options: resolveDescriptorModules(options) },
    };
  });
}

/**
 * Rebuilds a value from a descriptor tree, depth-first: nested descriptors (a transport's
 * authenticator) are constructed before the component whose options hold them.
 */
export function reviveComponent(
  value: unknown,
  load: (specifier: string) => unknown = createRequire(__filename),
): unknown {
  return mapDescriptors(value, (descriptor) => {
    const { module, exportName, options } = descriptor.$component;
    if (typeof exportName !== 'string' || !isRecord(options)) {
      throw new ValueError(`Invalid component descriptor for module ${module}: needs exportName and options`);
    }
    const revivedOptions = reviveComponent(options, load);
    const exported = (load(module) as Record<string, unknown>)[exportName];
    if (typeof exported !== 'function')
      throw new ValueError(`Module ${module} has no constructor export "${exportName}"`);
    return new (exported as new (options: unknown) => unknown)(revivedOptions);
  });
}

function mapDescriptors<T>(value: T, map: (descriptor: ComponentDescriptor) => unknown): T {
  if (isComponentDescriptor(value)) return map(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => mapDescriptors(item, map)) as T;
  if (isRecord(value) && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, mapDescriptors(item, map)]),
    ) as T;
  }
  return value;
}

function resolveModule(specifier: string): string {
  if (isAbsolute(specifier)) return specifier;
  const bases = [__filename, join(process.cwd(), 'noop.js'), require.main?.filename].filter(
    (base): base is string => !!base,
  );
  for (const base of bases) {
    try {
      return createRequire(base).resolve(specifier);
    } catch {
      // Not visible from this base; try the next one.
    }
  }
  throw new ValueError(
    `Cannot resolve module "${specifier}" named by the transport's describe(); install it where your app can require it`,
  );
}
