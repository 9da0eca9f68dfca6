import type { Migration } from '../schema/migrate.js';

/**
 * Replica leases, task claims and cancel requests: what lets replicas sharing one database reach
 * the tasks the others run, and finish the tasks of one that went away.
 *
 * Lease times are the database's clock (`now()`), never a replica's: replicas whose clocks disagree
 * still agree on whose lease ran out. A claim references its replica's lease row, so a lease row is
 * never deleted while a claim still needs a sweeper to finish its task. Keys use the "C" collation,
 * as the stores' tables do, so they compare with `agent_tasks`' keys.
 */
export const COORDINATION_MIGRATION: Migration = {
  version: 2,
  name: 'replica leases, task claims and cancel requests',
  sql: `
CREATE TABLE agent_replicas (
  replica_id text COLLATE "C" PRIMARY KEY,
  started_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX agent_replicas_expires_at ON agent_replicas (expires_at);

CREATE TABLE agent_task_claims (
  tenant text COLLATE "C" NOT NULL,
  principal_id text COLLATE "C" NOT NULL,
  task_id text COLLATE "C" NOT NULL,
  replica_id text COLLATE "C" NOT NULL REFERENCES agent_replicas (replica_id),
  claimed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, principal_id, task_id)
);
CREATE INDEX agent_task_claims_replica_id ON agent_task_claims (replica_id);

CREATE TABLE agent_cancel_requests (
  id bigserial PRIMARY KEY,
  tenant text COLLATE "C" NOT NULL,
  principal_id text COLLATE "C" NOT NULL,
  task_id text COLLATE "C" NOT NULL,
  reason text,
  requested_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_cancel_requests_task ON agent_cancel_requests (tenant, principal_id, task_id);
`,
};

export { TASK_EVENTS_CHANNEL } from '../run-store/task-writes.js';
/** Where a stored cancel request is announced to the replica that claims the task. */
export const TASK_CANCELS_CHANNEL = 'agent_task_cancels';
