import { readFileSync } from 'node:fs';

/** The sentence every package README's Install section carries; the tests keep its numbers true. */
export const INSTALL_SIZE_PATTERN =
  /Install size:\s+([\d.]+ (?:kB|MB))\s+for\s+the\s+package\s+itself,\s+([\d.]+ (?:kB|MB))\s+with\s+everything\s+it\s+pulls\s+in/;

export interface StatedSize {
  own: string;
  total: string;
}

/** The install size a README states, or undefined when it states none. */
export function statedInstallSize(readmePath: string): StatedSize | undefined {
  const match = INSTALL_SIZE_PATTERN.exec(readFileSync(readmePath, 'utf8'));
  return match ? { own: match[1] as string, total: match[2] as string } : undefined;
}
