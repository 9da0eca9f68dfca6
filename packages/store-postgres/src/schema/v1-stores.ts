import type { Migration } from './migrate.js';

/**
 * The stores' tables. Timestamps are the UTC ISO 8601 text every backend of `@agent/events` writes
 * (`2026-03-01T00:00:00.000Z`), and ids and timestamps that are sorted or compared use the "C"
 * collation (byte order): ordering, keyset pages and retention cutoffs then agree with the SQLite
 * and in-memory stores to the byte, whatever the database's default collation. JSON is kept as the
 * exact (redacted) text those stores keep.
 */
export const V1_STORES: Migration = {
  version: 1,
  name: 'stores: tasks and their event logs, run reports, registry entries, approvals',
  sql: `
CREATE TABLE agent_tasks (
  tenant       text COLLATE "C" NOT NULL,
  principal_id text COLLATE "C" NOT NULL,
  task_id      text COLLATE "C" NOT NULL,
  state        text NOT NULL,
  run_id       text,
  session_id   text,
  trace_id     text,
  agent_name   text,
  created_at   text COLLATE "C" NOT NULL,
  updated_at   text COLLATE "C" NOT NULL,
  task         text NOT NULL,
  -- The last sequence of the task's event log: appends take the next ones under the row's lock.
  event_count  integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, principal_id, task_id)
);
CREATE INDEX agent_tasks_owner_page ON agent_tasks (tenant, principal_id, updated_at DESC, task_id);
CREATE INDEX agent_tasks_owner_session ON agent_tasks (tenant, principal_id, session_id, updated_at DESC, task_id);
CREATE INDEX agent_tasks_owner_state ON agent_tasks (tenant, principal_id, state, updated_at DESC, task_id);
CREATE INDEX agent_tasks_run_id ON agent_tasks (run_id);
CREATE INDEX agent_tasks_trace_id ON agent_tasks (trace_id);
CREATE INDEX agent_tasks_agent_name ON agent_tasks (agent_name);
CREATE INDEX agent_tasks_updated_at ON agent_tasks (updated_at);
CREATE INDEX agent_tasks_finished ON agent_tasks (updated_at)
  WHERE state IN ('completed', 'canceled', 'failed', 'rejected');

CREATE TABLE agent_task_events (
  tenant       text COLLATE "C" NOT NULL,
  principal_id text COLLATE "C" NOT NULL,
  task_id      text COLLATE "C" NOT NULL,
  sequence     integer NOT NULL,
  event        text NOT NULL,
  PRIMARY KEY (tenant, principal_id, task_id, sequence),
  FOREIGN KEY (tenant, principal_id, task_id)
    REFERENCES agent_tasks (tenant, principal_id, task_id) ON DELETE CASCADE
);

CREATE TABLE agent_run_reports (
  run_id     text COLLATE "C" PRIMARY KEY,
  task_id    text,
  session_id text,
  trace_id   text,
  agent_name text,
  created_at text COLLATE "C" NOT NULL,
  report     text NOT NULL
);
CREATE INDEX agent_run_reports_session_id ON agent_run_reports (session_id, created_at);
CREATE INDEX agent_run_reports_trace_id ON agent_run_reports (trace_id);
CREATE INDEX agent_run_reports_agent_name ON agent_run_reports (agent_name);
CREATE INDEX agent_run_reports_task_id ON agent_run_reports (task_id);
CREATE INDEX agent_run_reports_created_at ON agent_run_reports (created_at);

CREATE TABLE agent_registry_entries (
  tenant        text COLLATE "C" NOT NULL,
  name          text COLLATE "C" NOT NULL,
  principal_id  text COLLATE "C" NOT NULL,
  card          text NOT NULL,
  -- Every skill id and tag of the card, computed by the same code as in the other backends.
  skill_keys    text[] NOT NULL,
  registered_at text COLLATE "C" NOT NULL,
  heartbeat_at  text COLLATE "C" NOT NULL,
  expires_at    text COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant, name)
);
CREATE INDEX agent_registry_entries_expires_at ON agent_registry_entries (expires_at);
CREATE INDEX agent_registry_entries_skill_keys ON agent_registry_entries USING gin (skill_keys);

-- Request ids are unique per owner, as task ids are: another owner's id must look unknown, so it
-- cannot collide with (and reveal) a stranger's request. seq is the filing order lists answer in.
CREATE TABLE agent_approvals (
  seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  request_id   text COLLATE "C" NOT NULL,
  tenant       text COLLATE "C" NOT NULL,
  principal_id text COLLATE "C" NOT NULL,
  task_id      text COLLATE "C" NOT NULL,
  action       text NOT NULL,
  action_hash  text NOT NULL,
  state        text NOT NULL,
  created_at   text COLLATE "C" NOT NULL,
  decided_at   text COLLATE "C",
  decided_by   text,
  reason       text,
  UNIQUE (tenant, principal_id, request_id)
);
CREATE INDEX agent_approvals_owner_seq ON agent_approvals (tenant, principal_id, seq);
`,
};
