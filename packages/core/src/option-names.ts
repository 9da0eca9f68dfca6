import { ValueError } from './errors.js';

/** Throws ValueError for an option name `accepted` does not list, naming the accepted ones. */
export function checkOptionNames(owner: string, options: object, accepted: readonly string[]): void {
  // Runs on hot paths (every task builds contexts and events): nothing is allocated when all is well.
  let refused = false;
  for (const name in options) {
    if (Object.prototype.hasOwnProperty.call(options, name) && !accepted.includes(name)) {
      refused = true;
      break;
    }
  }
  if (!refused) return;
  const unknown = Object.keys(options).filter((name) => !accepted.includes(name));
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
