/**
 * The task ids A2A servers minted for this client, per base URL. A2A task ids are the server's: a
 * native task whose id is one of these continues that task (`message.taskId`), any other id starts a
 * new one. Bounded: past `limit` ids per server the oldest is forgotten.
 */
export const DEFAULT_REMEMBERED_TASK_IDS = 10_000;

export class RemoteTaskIds {
  private readonly servers = new Map<string, Set<string>>();

  constructor(private readonly limit = DEFAULT_REMEMBERED_TASK_IDS) {}

  remember(baseUrl: string, id: string): void {
    if (id === '') return;
    const key = keyOf(baseUrl);
    let ids = this.servers.get(key);
    if (!ids) {
      ids = new Set();
      this.servers.set(key, ids);
    }
    // Re-inserting moves the id to the newest end, so an id in use is the last to go.
    ids.delete(id);
    ids.add(id);
    if (ids.size > this.limit) ids.delete(ids.values().next().value as string);
  }

  has(baseUrl: string, id: string): boolean {
    return this.servers.get(keyOf(baseUrl))?.has(id) === true;
  }
}

function keyOf(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}
