import { ValueError, type Transport } from '@agent/core';
import type { Authenticator } from '@agent/auth';

interface HttpTransportModule {
  HTTPTransport: new (options: {
    url: string;
    authenticator?: Authenticator;
    credentials?: string;
  }) => Transport;
}

/**
 * Resolves `transport: 'http'`. `@agent/transport-http` is deliberately not a dependency of the
 * runtime (install only what you use), so it is required lazily here.
 */
export function loadHttpTransport(
  options: { url: string; authenticator?: Authenticator; credentials?: string },
  load: (name: string) => unknown = requireModule,
): Transport {
  if (!options.url)
    throw new ValueError(
      "transport: 'http' needs card.url (the address to serve, e.g. http://127.0.0.1:8080)",
    );
  let module: HttpTransportModule;
  try {
    module = load('@agent/transport-http') as HttpTransportModule;
  } catch (error) {
    throw new ValueError(
      "transport: 'http' needs the @agent/transport-http package: install it next to @agent/runtime",
      { cause: error },
    );
  }
  if (typeof module.HTTPTransport !== 'function')
    throw new ValueError('@agent/transport-http does not export HTTPTransport');
  const init: { url: string; authenticator?: Authenticator; credentials?: string } = { url: options.url };
  if (options.authenticator) init.authenticator = options.authenticator;
  if (options.credentials !== undefined) init.credentials = options.credentials;
  return new module.HTTPTransport(init);
}

function requireModule(name: string): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(name);
}
