import type { Migration } from './migrate.js';
import { COORDINATION_MIGRATION } from '../coordination/schema.js';
import { V1_STORES } from './v1-stores.js';

/**
 * The package's schema, step by step. A released step is never edited: a change is a new step with
 * the next version.
 */
export const MIGRATIONS: readonly Migration[] = [V1_STORES, COORDINATION_MIGRATION];

/** The version the schema is at once every step above is applied. */
export const POSTGRES_SCHEMA_VERSION: number = Math.max(...MIGRATIONS.map((migration) => migration.version));
