// Public API of @agent/transport-grpc: anything exported here is public.
export {};
