/**
 * Preloaded into every server child (`node --require dist/probe.js <server>`): answers the bench's
 * IPC questions about the child's own CPU time and memory. It is a preload rather than code in the
 * servers so that the reference server runs its shipped `dist/main.js` unchanged, and it reads
 * `process.cpuUsage()` / `process.resourceUsage()` from inside the process because those are exact
 * (µs, peak RSS) where /proc/<pid>/stat has a 10 ms clock tick.
 */
import type { ProbeReply, ProbeRequest } from './probe-protocol.js';

function isProbeRequest(value: unknown): value is ProbeRequest {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'probe';
}

if (process.send) {
  process.on('message', (message: unknown) => {
    if (!isProbeRequest(message)) return;
    // `gc` exists only under --expose-gc (the idle-connection subject asks for it): a forced
    // collection before reading RSS keeps garbage that happens to be uncollected out of the figure.
    const gc = (globalThis as { gc?: () => void }).gc;
    if (message.gc && gc) gc();
    const cpu = process.cpuUsage();
    const reply: ProbeReply = {
      type: 'probe',
      id: message.id,
      cpuMicros: cpu.user + cpu.system,
      rssBytes: process.memoryUsage.rss(),
      // resourceUsage reports kilobytes: the peak resident set since the process started.
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
    };
    process.send?.(reply);
  });
  // The IPC channel must not keep a server alive that would otherwise exit on its own.
  process.channel?.unref();
}
