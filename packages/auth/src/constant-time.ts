import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two strings in time independent of where they differ. Both sides are hashed first so
 * that unequal lengths leak nothing either.
 */
export function constantTimeEquals(a: string, b: string): boolean {
  const left = createHash('sha256').update(a, 'utf8').digest();
  const right = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}
