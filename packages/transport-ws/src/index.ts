// Public API of @agent/transport-ws: anything exported here is public.
export {};
