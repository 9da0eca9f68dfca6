// Public API of @agent/client: anything exported here is public.
export {};
