import { ValueError } from './errors.js';

/** Throws ValueError for an option name `accepted` does not list, naming the accepted ones. */
export function checkOptionNames(owner: string, options: object, accepted: readonly string[]): void {
  const allowed = new Set(accepted);
  const unknown = Object.keys(options).filter((name) => !allowed.has(name));
  if (unknown.length === 0) return;
  const list = unknown.map((name) => `"${name}"`).join(', ');
  throw new ValueError(
    `${owner} does not accept the option${unknown.length > 1 ? 's' : ''} ${list}; accepted: ${[...accepted].sort().join(', ')}`,
  );
}

/**
 * The option names of an options type, as a list for {@link checkOptionNames}. The compiler checks
 * the list against the type both ways, so an option added to the type cannot be refused by mistake.
 */
export function optionNames<T extends object>(names: {
  readonly [K in keyof Required<T>]: true;
}): readonly string[] {
  return Object.freeze(Object.keys(names));
}
