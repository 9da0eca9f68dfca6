/**
 * A bounded protobuf reader for the `agent.v1` messages, in place of the generated `decode()`.
 *
 * The generated decoder recurses once per nested message (three times per level of a Struct) and
 * gives up at 100 messages with a bare Error, so a Struct nested 33 levels deep was refused while
 * HTTP takes 64, and it assigns Struct keys with `=`, so a `__proto__` key became the prototype of
 * the decoded object. This reader walks the same bytes against a table of the messages and:
 *
 * - counts JSON nesting as the JSON wires count it (a Task is depth 1, its `metadata` 2, a part's
 *   content 6, …) and refuses a level past `maxDepth` before descending into it, so no recursion
 *   ever goes deeper than the limit; a repeated field or ListValue past `maxArrayLength` elements
 *   is refused as it is counted. Both with the INVALID_REQUEST the JSON wires answer
 *   (`data.max_depth` / `data.max_array_length`);
 * - keeps every Struct key an own data property, `__proto__` included (what `JSON.parse` does);
 * - refuses, naming the field, what the generated decoder let through or failed on with a library
 *   message: a known field with the wrong wire type, a length past the end of its message, a
 *   truncated varint, an invalid tag, a string that is not UTF-8;
 * - skips unknown fields (plain proto behaviour; groups through the library's bounded skip).
 *
 * It yields the objects the generated decoder would (`pb.InvokeRequest`, …), so the codec's checks
 * (enums, oneof cases) run on them unchanged. Numbers that JSON cannot carry (NaN, ±Infinity in a
 * `number_value`) become `null`, as `JSON.stringify` makes them.
 */
import { InvalidRequestError } from '@agent/core';
import { DEFAULT_JSON_LIMITS, type JsonLimits } from '@agent/core/internal';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { jsonLimitExceeded } from './json-value.js';

type Kind =
  | 'string'
  | 'enum'
  | 'uint32'
  | 'bool'
  | 'double'
  /** A nested message, named by `message`. */
  | 'message'
  /** `google.protobuf.Struct`, decoded to a JSON object. */
  | 'struct'
  /** `google.protobuf.Value`, decoded to a JSON value (undefined when no kind is set). */
  | 'value'
  /** `google.protobuf.ListValue`, decoded to a JSON array. */
  | 'list'
  /** `map<string, message>`, decoded to an object of messages. */
  | 'map';

interface Field {
  /** The property of the generated message type (camelCase), or the oneof case. */
  readonly name: string;
  /** The proto field name, for the pointers of error messages. */
  readonly json: string;
  readonly kind: Kind;
  readonly repeated?: true;
  /** Explicit presence (`optional`): absent stays undefined rather than the default. */
  readonly optional?: true;
  /** The oneof this field is a case of: the message gets `{ [oneof]: { $case: name, value } }`. */
  readonly oneof?: string;
  readonly message?: string;
}

interface MessageType {
  /** Whether the message is a JSON object of its own (a level of nesting), not an envelope. */
  readonly level: boolean;
  readonly fields: Readonly<Record<number, Field>>;
}

const f = (
  name: string,
  json: string,
  kind: Kind,
  more: Partial<Pick<Field, 'repeated' | 'optional' | 'oneof' | 'message'>> = {},
): Field => ({ name, json, kind, ...more });

/** Every message of `agent/v1/agent.proto` either side reads (the Struct family is built in). */
const MESSAGES: Readonly<Record<string, MessageType>> = {
  InvokeRequest: {
    level: false,
    fields: {
      1: f('sendTask', 'send_task', 'message', { oneof: 'operation', message: 'SendTask' }),
      2: f('cancelTask', 'cancel_task', 'message', { oneof: 'operation', message: 'CancelTask' }),
      3: f('getAgentCard', 'get_agent_card', 'message', { oneof: 'operation', message: 'GetAgentCard' }),
      4: f('getTask', 'get_task', 'message', { oneof: 'operation', message: 'GetTask' }),
      5: f('listTasks', 'list_tasks', 'message', { oneof: 'operation', message: 'ListTasks' }),
    },
  },
  SendTask: { level: false, fields: { 1: f('task', 'task', 'message', { message: 'Task' }) } },
  CancelTask: {
    level: true,
    fields: { 1: f('taskId', 'task_id', 'string'), 2: f('reason', 'reason', 'string', { optional: true }) },
  },
  GetAgentCard: { level: true, fields: {} },
  GetTask: {
    level: true,
    fields: {
      1: f('taskId', 'task_id', 'string'),
      2: f('historyLength', 'history_length', 'uint32', { optional: true }),
    },
  },
  ListTasks: {
    level: true,
    fields: {
      1: f('sessionId', 'session_id', 'string', { optional: true }),
      2: f('state', 'state', 'enum', { optional: true }),
      3: f('pageSize', 'page_size', 'uint32', { optional: true }),
      4: f('pageToken', 'page_token', 'string', { optional: true }),
    },
  },
  InvokeResponse: {
    level: false,
    fields: {
      1: f('task', 'task', 'message', { oneof: 'result', message: 'Task' }),
      2: f('agentCard', 'agent_card', 'message', { oneof: 'result', message: 'AgentCard' }),
      3: f('taskList', 'task_list', 'message', { oneof: 'result', message: 'TaskList' }),
    },
  },
  TaskList: {
    level: true,
    fields: {
      1: f('tasks', 'tasks', 'message', { repeated: true, message: 'Task' }),
      2: f('nextPageToken', 'next_page_token', 'string'),
    },
  },
  SubscribeRequest: {
    level: true,
    fields: { 1: f('taskId', 'task_id', 'string'), 2: f('after', 'after', 'uint32') },
  },
  Task: {
    level: true,
    fields: {
      1: f('id', 'id', 'string'),
      2: f('state', 'state', 'enum'),
      3: f('messages', 'messages', 'message', { repeated: true, message: 'Message' }),
      4: f('artifacts', 'artifacts', 'message', { repeated: true, message: 'Artifact' }),
      5: f('metadata', 'metadata', 'struct'),
      6: f('createdAt', 'created_at', 'string'),
    },
  },
  Message: {
    level: true,
    fields: {
      1: f('id', 'id', 'string'),
      2: f('role', 'role', 'enum'),
      3: f('parts', 'parts', 'message', { repeated: true, message: 'Part' }),
      4: f('timestamp', 'timestamp', 'string'),
    },
  },
  Part: {
    level: true,
    fields: { 1: f('type', 'type', 'string'), 2: f('content', 'content', 'value') },
  },
  Artifact: {
    level: true,
    fields: {
      1: f('id', 'id', 'string'),
      2: f('parts', 'parts', 'message', { repeated: true, message: 'Part' }),
      3: f('metadata', 'metadata', 'struct'),
      4: f('createdAt', 'created_at', 'string'),
      5: f('kind', 'kind', 'string', { optional: true }),
      6: f('name', 'name', 'string', { optional: true }),
      7: f('uri', 'uri', 'string', { optional: true }),
      8: f('mediaType', 'media_type', 'string', { optional: true }),
      9: f('actionId', 'action_id', 'string', { optional: true }),
    },
  },
  SecurityScheme: {
    level: true,
    fields: {
      1: f('type', 'type', 'string'),
      2: f('scheme', 'scheme', 'string', { optional: true }),
      3: f('description', 'description', 'string'),
      4: f('metadata', 'metadata', 'struct'),
    },
  },
  SecuritySchemes: {
    level: false,
    fields: { 1: f('entries', 'entries', 'map', { message: 'SecurityScheme' }) },
  },
  AgentCard: {
    level: true,
    fields: {
      1: f('name', 'name', 'string'),
      2: f('description', 'description', 'string'),
      3: f('url', 'url', 'string'),
      4: f('securitySchemes', 'security_schemes', 'message', { message: 'SecuritySchemes' }),
      5: f('extra', 'extra', 'struct'),
    },
  },
  TaskEvent: {
    level: true,
    fields: {
      1: f('type', 'type', 'string'),
      2: f('taskId', 'task_id', 'string'),
      3: f('timestamp', 'timestamp', 'string'),
      4: f('status', 'status', 'message', { oneof: 'event', message: 'TaskStatusUpdate' }),
      5: f('artifact', 'artifact', 'message', { oneof: 'event', message: 'TaskArtifactUpdate' }),
      6: f('llmStream', 'llm_stream', 'message', { oneof: 'event', message: 'LlmStreamDelta' }),
      7: f('runtime', 'runtime', 'struct', { oneof: 'event' }),
      8: f('extra', 'extra', 'struct'),
      9: f('sequence', 'sequence', 'uint32'),
    },
  },
  // The typed parts of an event are fields of the event's own JSON object.
  TaskStatusUpdate: {
    level: false,
    fields: {
      1: f('state', 'state', 'enum'),
      2: f('final', 'final', 'bool'),
      3: f('message', 'message', 'message', { message: 'Message' }),
      4: f('task', 'task', 'message', { message: 'Task' }),
    },
  },
  TaskArtifactUpdate: {
    level: false,
    fields: {
      1: f('artifact', 'artifact', 'message', { message: 'Artifact' }),
      2: f('append', 'append', 'bool'),
      3: f('lastChunk', 'last_chunk', 'bool'),
    },
  },
  LlmStreamDelta: { level: false, fields: { 1: f('delta', 'delta', 'string') } },
};

/** The message names {@link readMessage} accepts. */
export type AgentMessageName = keyof typeof MESSAGES & string;

const WIRE_NAMES: Record<number, string> = {
  [WireType.Varint]: 'varint',
  [WireType.Bit64]: '64-bit',
  [WireType.LengthDelimited]: 'length-delimited',
  [WireType.StartGroup]: 'start-group',
  [WireType.EndGroup]: 'end-group',
  [WireType.Bit32]: '32-bit',
};

function expectedWireType(kind: Kind): WireType {
  switch (kind) {
    case 'enum':
    case 'uint32':
    case 'bool':
      return WireType.Varint;
    case 'double':
      return WireType.Bit64;
    default:
      return WireType.LengthDelimited;
  }
}

/** A failure whose words are ours: the reader turns it into the INVALID_REQUEST to answer. */
class Malformed extends Error {}

/** Escapes a Struct key for a JSON pointer (RFC 6901). */
function pointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

class Reader {
  private readonly reader: BinaryReader;
  /** The field being read, as a JSON pointer: named in the error when the bytes end or break. */
  pointer = '';

  constructor(
    private readonly bytes: Uint8Array,
    private readonly limits: JsonLimits,
  ) {
    this.reader = new BinaryReader(bytes);
  }

  get pos(): number {
    return this.reader.pos;
  }

  get length(): number {
    return this.reader.len;
  }

  /** Refuses a JSON container at `depth` (1 = outermost) past the limit, before it is read. */
  private enter(depth: number): void {
    if (depth > this.limits.maxDepth) throw jsonLimitExceeded('depth', this.limits);
  }

  /** Reads the fields of `type` up to `end`; `depth` is the JSON depth of the level that holds it. */
  message(name: string, end: number, depth: number, pointer: string): Record<string, unknown> {
    const type = MESSAGES[name]!;
    const level = type.level ? depth + 1 : depth;
    if (type.level) this.enter(level);
    const out: Record<string, unknown> = {};
    for (const field of Object.values(type.fields)) {
      if (field.oneof !== undefined || field.optional) continue;
      if (field.repeated) out[field.name] = [];
      else if (field.kind === 'map') out[field.name] = {};
      else if (field.kind === 'string') out[field.name] = '';
      else if (field.kind === 'bool') out[field.name] = false;
      else if (field.kind === 'enum' || field.kind === 'uint32' || field.kind === 'double')
        out[field.name] = 0;
    }
    const counts = new Map<number, number>();
    while (this.pos < end) {
      this.pointer = pointer;
      const [number, wireType] = this.tag(end);
      const field = type.fields[number];
      if (field === undefined) {
        this.skip(wireType, number, end);
        continue;
      }
      const fieldPointer = `${pointer}/${field.json}`;
      this.pointer = fieldPointer;
      const expected = expectedWireType(field.kind);
      if (wireType !== expected) {
        throw new Malformed(
          `${fieldPointer} has wire type ${WIRE_NAMES[wireType] ?? wireType}, expected ${WIRE_NAMES[expected]}`,
        );
      }
      if (field.repeated) {
        const count = (counts.get(number) ?? 0) + 1;
        counts.set(number, count);
        // The array is a level of its own, its elements one further.
        this.enter(level + 1);
        if (count > this.limits.maxArrayLength) throw jsonLimitExceeded('array', this.limits);
        (out[field.name] as unknown[]).push(
          this.field(field, end, level + 1, `${fieldPointer}/${count - 1}`),
        );
      } else if (field.kind === 'map') {
        const [key, value] = this.mapEntry(field, end, level, fieldPointer);
        if (value !== undefined) setOwn(out[field.name] as Record<string, unknown>, key, value);
      } else {
        const value = this.field(field, end, level, fieldPointer);
        if (field.oneof !== undefined) out[field.oneof] = { $case: field.name, value };
        // A Value with no kind set is no value: the field stays absent, as the generated decoder leaves it.
        else if (value !== undefined) out[field.name] = value;
      }
    }
    this.atEnd(end, pointer);
    return out;
  }

  private field(field: Field, end: number, depth: number, pointer: string): unknown {
    switch (field.kind) {
      case 'string':
        return this.string(end, pointer);
      case 'enum':
        return this.varint(end, pointer) | 0;
      case 'uint32':
        return this.varint(end, pointer);
      case 'bool':
        return this.varint(end, pointer) !== 0;
      case 'double':
        return this.double(end);
      case 'message':
        return this.message(field.message!, this.lengthEnd(end, pointer), depth, pointer);
      case 'struct':
        return this.struct(this.lengthEnd(end, pointer), depth, pointer);
      case 'value':
        return this.value(this.lengthEnd(end, pointer), depth, pointer);
      case 'list':
        return this.list(this.lengthEnd(end, pointer), depth, pointer);
      case 'map':
        throw new Malformed(`${pointer} is a map`);
    }
  }

  /** One `map<string, message>` entry: key 1, value 2. */
  private mapEntry(field: Field, outer: number, depth: number, pointer: string): [string, unknown] {
    const end = this.lengthEnd(outer, pointer);
    let key = '';
    let value: unknown;
    // The map is one JSON object: its entries' values sit one level inside it.
    this.enter(depth + 1);
    while (this.pos < end) {
      this.pointer = pointer;
      const [number, wireType] = this.tag(end);
      if (number === 1 && wireType === WireType.LengthDelimited) key = this.string(end, pointer);
      else if (number === 2 && wireType === WireType.LengthDelimited) {
        const at = `${pointer}/${pointerToken(key)}`;
        value = this.message(field.message!, this.lengthEnd(end, at), depth + 1, at);
      } else this.skip(wireType, number, end);
    }
    this.atEnd(end, pointer);
    return [key, value];
  }

  /** `google.protobuf.Struct`: `repeated FieldsEntry fields = 1` with `string key = 1; Value value = 2`. */
  private struct(end: number, depth: number, pointer: string): Record<string, unknown> {
    const level = depth + 1;
    this.enter(level);
    const out: Record<string, unknown> = {};
    while (this.pos < end) {
      this.pointer = pointer;
      const [number, wireType] = this.tag(end);
      if (number !== 1) {
        this.skip(wireType, number, end);
        continue;
      }
      this.wireType(wireType, WireType.LengthDelimited, `${pointer} entry`);
      const entryEnd = this.lengthEnd(end, pointer);
      let key = '';
      let value: unknown;
      while (this.pos < entryEnd) {
        this.pointer = pointer;
        const [entryNumber, entryWireType] = this.tag(entryEnd);
        if (entryNumber === 1) {
          this.wireType(entryWireType, WireType.LengthDelimited, `${pointer} key`);
          key = this.string(entryEnd, pointer);
        } else if (entryNumber === 2) {
          const at = `${pointer}/${pointerToken(key)}`;
          this.wireType(entryWireType, WireType.LengthDelimited, at);
          value = this.value(this.lengthEnd(entryEnd, at), level, at);
        } else this.skip(entryWireType, entryNumber, entryEnd);
      }
      this.atEnd(entryEnd, pointer);
      if (value !== undefined) setOwn(out, key, value);
    }
    this.atEnd(end, pointer);
    return out;
  }

  /** `google.protobuf.Value`: one of null 1, number 2, string 3, bool 4, struct 5, list 6; the last one set wins. */
  private value(end: number, depth: number, pointer: string): unknown {
    let value: unknown;
    while (this.pos < end) {
      this.pointer = pointer;
      const [number, wireType] = this.tag(end);
      switch (number) {
        case 1:
          this.wireType(wireType, WireType.Varint, pointer);
          this.varint(end, pointer);
          value = null;
          break;
        case 2: {
          this.wireType(wireType, WireType.Bit64, pointer);
          const number = this.double(end);
          value = Number.isFinite(number) ? number : null;
          break;
        }
        case 3:
          this.wireType(wireType, WireType.LengthDelimited, pointer);
          value = this.string(end, pointer);
          break;
        case 4:
          this.wireType(wireType, WireType.Varint, pointer);
          value = this.varint(end, pointer) !== 0;
          break;
        case 5:
          this.wireType(wireType, WireType.LengthDelimited, pointer);
          value = this.struct(this.lengthEnd(end, pointer), depth, pointer);
          break;
        case 6:
          this.wireType(wireType, WireType.LengthDelimited, pointer);
          value = this.list(this.lengthEnd(end, pointer), depth, pointer);
          break;
        default:
          this.skip(wireType, number, end);
      }
    }
    this.atEnd(end, pointer);
    return value;
  }

  /** `google.protobuf.ListValue`: `repeated Value values = 1`; a Value with no kind is `null`. */
  private list(end: number, depth: number, pointer: string): unknown[] {
    const level = depth + 1;
    this.enter(level);
    const out: unknown[] = [];
    while (this.pos < end) {
      this.pointer = pointer;
      const [number, wireType] = this.tag(end);
      if (number !== 1) {
        this.skip(wireType, number, end);
        continue;
      }
      const at = `${pointer}/${out.length}`;
      this.wireType(wireType, WireType.LengthDelimited, at);
      if (out.length >= this.limits.maxArrayLength) throw jsonLimitExceeded('array', this.limits);
      out.push(this.value(this.lengthEnd(end, at), level, at) ?? null);
    }
    this.atEnd(end, pointer);
    return out;
  }

  private wireType(actual: number, expected: WireType, pointer: string): void {
    if (actual !== expected) {
      throw new Malformed(
        `${pointer} has wire type ${WIRE_NAMES[actual] ?? actual}, expected ${WIRE_NAMES[expected]}`,
      );
    }
  }

  private tag(end: number): [number, number] {
    const tag = this.varint(end, this.pointer);
    const number = tag >>> 3;
    const wireType = tag & 7;
    if (number === 0 || wireType > WireType.Bit32) {
      throw new Malformed(`${this.pointer || 'the message'} has an invalid field tag ${tag}`);
    }
    if (wireType === WireType.EndGroup) {
      throw new Malformed(`${this.pointer || 'the message'} has an end-group tag without its start`);
    }
    return [number, wireType];
  }

  /** An unknown field, skipped; a group's nesting is bounded by the library's own limit. */
  private skip(wireType: number, number: number, end: number): void {
    this.reader.skip(wireType, number);
    if (this.pos > end) this.truncated();
  }

  /** A varint of at most 10 bytes (the library's reader refuses longer ones), as a uint32. */
  private varint(end: number, pointer: string): number {
    const value = this.reader.uint32();
    if (this.pos > end) this.truncated(pointer);
    return value;
  }

  private double(end: number): number {
    if (this.pos + 8 > end) this.truncated();
    return this.reader.double();
  }

  /** The end of the length-delimited field that starts here, within `outer`. */
  private lengthEnd(outer: number, pointer: string): number {
    const length = this.varint(outer, pointer);
    const end = this.pos + length;
    if (end > outer) throw new Malformed(`${pointer || 'the message'} is longer than what holds it`);
    return end;
  }

  private string(outer: number, pointer: string): string {
    const end = this.lengthEnd(outer, pointer);
    const bytes = this.bytes.subarray(this.pos, end);
    this.reader.pos = end;
    try {
      return UTF8.decode(bytes);
    } catch {
      throw new Malformed(`${pointer} is not valid UTF-8`);
    }
  }

  private atEnd(end: number, pointer: string): void {
    if (this.pos !== end) throw new Malformed(`${pointer || 'the message'} overruns its length`);
  }

  private truncated(pointer = this.pointer): never {
    throw new Malformed(`the message ends inside ${pointer || 'a field'}`);
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes `bytes` as the `agent.v1` message `name` under `limits` (requests: core's JSON limits).
 * Throws only InvalidRequestError: `Request body is not a valid agent.v1.<name>: <what, where>`, or
 * the JSON limit's own error.
 */
export function readMessage<T>(
  name: AgentMessageName,
  bytes: Uint8Array,
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
): T {
  const reader = new Reader(bytes, limits);
  try {
    return reader.message(name, reader.length, 0, '') as T;
  } catch (error) {
    if (error instanceof InvalidRequestError) throw error;
    const what =
      error instanceof Malformed
        ? error.message
        : // The library's reader ran past the bytes (a truncated varint or fixed field) or met a
          // group it cannot skip; its own wording is not passed on.
          `the message is truncated or malformed inside ${reader.pointer || 'its first field'}`;
    throw new InvalidRequestError(`Request body is not a valid agent.v1.${name}: ${what}`);
  }
}
