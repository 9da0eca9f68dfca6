/** The messages between the bench process and the probe preloaded into each server child. */
export interface ProbeRequest {
  type: 'probe';
  id: number;
  /** Run a full GC first (only when the child was started with --expose-gc). */
  gc: boolean;
}

export interface ProbeReply {
  type: 'probe';
  id: number;
  /** process.cpuUsage(): user + system CPU time of the whole process so far, in µs. */
  cpuMicros: number;
  rssBytes: number;
  /** Peak resident set size since the process started. */
  maxRssBytes: number;
}
