import type { SecurityContext } from './security-context.js';
import type { SecurityScheme } from './security-scheme.js';

/**
 * Base class of every authenticator. A subclass provides `securityScheme`, `authenticate` and
 * `refreshToken`; one missing any of them cannot be instantiated (TypeScript refuses to compile it,
 * and the constructor throws a TypeError for plain JavaScript subclasses).
 *
 * `authenticate` receives the credential after prefix removal and throws on any failure; every
 * thrown error is a rejection (401 on the wire). Authenticators decide access only: scopes are the
 * application's business.
 *
 * The built-in providers also implement core's `Describable` (`describe()`), so a client-side copy
 * can be rebuilt in a worker thread; a descriptor holds the provider's secrets, so never log it.
 */
export abstract class Authenticator {
  constructor() {
    const missing = (['securityScheme', 'authenticate', 'refreshToken'] as const).filter((member) => {
      const descriptor = findDescriptor(this, member);
      if (!descriptor) return true;
      return member === 'securityScheme'
        ? !descriptor.get && descriptor.value === undefined
        : typeof descriptor.value !== 'function';
    });
    if (missing.length > 0) {
      throw new TypeError(
        `Can't instantiate abstract class ${new.target.name} without ${missing.join(', ')}`,
      );
    }
  }

  abstract get securityScheme(): SecurityScheme;
  abstract authenticate(credentials: string): Promise<SecurityContext>;
  /** Returns a refreshed context, or the same object when the provider cannot refresh. Never scheduled automatically. */
  abstract refreshToken(context: SecurityContext): Promise<SecurityContext>;
}

function findDescriptor(target: object, key: string): PropertyDescriptor | undefined {
  for (
    let proto: object | null = Object.getPrototypeOf(target);
    proto && proto !== Authenticator.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    const descriptor = Object.getOwnPropertyDescriptor(proto, key);
    if (descriptor) return descriptor;
  }
  return undefined;
}
