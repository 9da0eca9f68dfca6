// Public API of @agent/reference-server: anything exported here is public.
export {};
