// Public API of @agent/transport-memory: anything exported here is public.
export {};
