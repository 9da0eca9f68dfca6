import type { Migration } from './migrate.js';

/**
 * The package's schema, step by step. A released step is never edited: a change is a new step with
 * the next version.
 */
export const MIGRATIONS: readonly Migration[] = [];
