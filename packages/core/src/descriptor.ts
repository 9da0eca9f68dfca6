/**
 * A structured-clonable recipe that rebuilds a component in another thread: `client.sync` runs each
 * call in a worker with its own transport, rebuilt from the transport's descriptor.
 * Option values may themselves be descriptors (a transport's authenticator), revived depth-first.
 */
export interface ComponentDescriptor {
  $component: {
    /** Package to `require`, e.g. `@agent/transport-http`. */
    module: string;
    /** Named export: a class constructed as `new Export(options)`. */
    exportName: string;
    options: Record<string, unknown>;
  };
}

/** Implemented by transports and authenticators that can be rebuilt in a worker thread. */
export interface Describable {
  describe(): ComponentDescriptor;
}

export function isComponentDescriptor(value: unknown): value is ComponentDescriptor {
  if (typeof value !== 'object' || value === null || !('$component' in value)) return false;
  const inner = (value as { $component: unknown }).$component;
  return (
    typeof inner === 'object' && inner !== null && typeof (inner as { module?: unknown }).module === 'string'
  );
}

export function describeComponent(
  module: string,
  exportName: string,
  options: Record<string, unknown>,
): ComponentDescriptor {
  return { $component: { module, exportName, options } };
}
