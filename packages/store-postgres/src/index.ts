// Public API of @agent/store-postgres: anything exported here is public.
export {};
