import Ajv, { type ValidateFunction } from 'ajv';
import { toValidationIssues, ValidationError, ValueError, type JsonObject } from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
import type { CancellationToken } from './cancellation.js';
import { RunAction, type RunActionInit } from './run-action.js';
import type { RunContext } from './run-context.js';
import type { RuntimeEventInput } from './run-events.js';

/** What a tool handler receives besides its arguments. */
export interface ToolContext {
  /** The run's context, or the one given to `callToolInContext`. */
  context: RunContext | null;
  /** The authorized action (its id correlates the tool's events). */
  action: RunAction;
  /** Aborts when the task is canceled: pass it to fetch, child processes, timers. */
  signal: AbortSignal;
  token: CancellationToken;
  /** Emits a run event (e.g. `task.progress`); a no-op outside a task. */
  emit(event: RuntimeEventInput): Promise<void>;
}

export interface ToolDefinition<TArgs extends JsonObject = JsonObject> {
  /** Letters, digits, `_` and `-`, at most 64 characters (what model APIs accept). */
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. Default `{"type": "object"}`. */
  parameters?: JsonObject;
  /** Capabilities the tool needs; always part of its action, whatever `actionBuilder` returns. */
  capabilities?: readonly string[];
  /** Action kind. Default `tool.call`. */
  kind?: string;
  /**
   * Builds a custom action from validated arguments (e.g. with preview artifacts, or extra
   * capabilities that depend on the arguments). Runs before authorization; must not act.
   */
  actionBuilder?: (
    args: TArgs,
    context: RunContext | null,
  ) => RunAction | RunActionInit | Promise<RunAction | RunActionInit>;
  /** Performs the side effect. Its result should be JSON-serializable. */
  handler: (args: TArgs, tool: ToolContext) => unknown;
}

const DEFINITION_NAMES = optionNames<ToolDefinition>({
  name: true,
  description: true,
  parameters: true,
  capabilities: true,
  kind: true,
  actionBuilder: true,
  handler: true,
});

/** A tool as a model sees it. */
export interface ToolDeclaration {
  name: string;
  description: string;
  parameters: JsonObject;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export class RegisteredTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonObject;
  readonly capabilities: readonly string[];
  readonly kind: string;
  private readonly validator: ValidateFunction;

  constructor(
    readonly definition: ToolDefinition,
    ajv: Ajv,
  ) {
    if (!isRecord(definition)) throw new ValueError('A tool definition must be an object');
    checkOptionNames(
      typeof definition.name === 'string' ? `Tool "${definition.name}"` : 'A tool definition',
      definition,
      DEFINITION_NAMES,
    );
    if (typeof definition.name !== 'string' || !TOOL_NAME.test(definition.name)) {
      throw new ValueError(
        `Invalid tool name: ${JSON.stringify(definition.name)} (letters, digits, _ and -, at most 64)`,
      );
    }
    if (typeof definition.handler !== 'function')
      throw new ValueError(`Tool "${definition.name}" needs a handler function`);
    if (definition.actionBuilder !== undefined && typeof definition.actionBuilder !== 'function') {
      throw new ValueError(`Tool "${definition.name}": actionBuilder must be a function`);
    }
    const capabilities = definition.capabilities ?? [];
    if (
      !Array.isArray(capabilities) ||
      capabilities.some((capability) => typeof capability !== 'string' || capability === '')
    ) {
      throw new ValueError(`Tool "${definition.name}": capabilities must be a list of non-empty strings`);
    }
    const parameters = definition.parameters ?? { type: 'object' };
    if (!isRecord(parameters))
      throw new ValueError(`Tool "${definition.name}": parameters must be a JSON Schema object`);
    try {
      this.validator = ajv.compile(parameters);
    } catch (error) {
      throw new ValueError(
        `Tool "${definition.name}": invalid parameters schema: ${(error as Error).message}`,
        { cause: error },
      );
    }
    this.name = definition.name;
    this.description = definition.description ?? '';
    this.parameters = parameters;
    this.capabilities = [...capabilities];
    this.kind = definition.kind ?? 'tool.call';
  }

  get declaration(): ToolDeclaration {
    return { name: this.name, description: this.description, parameters: this.parameters };
  }

  /** Returns the arguments when they match the schema; throws ValidationError with every failure otherwise. */
  validate(args: unknown): JsonObject {
    const value = args === undefined ? {} : args;
    if (!isRecord(value)) {
      throw new ValidationError(`Invalid arguments for tool "${this.name}": / must be an object`, {
        data: { tool: this.name, errors: [{ pointer: '/', message: 'must be object' }] },
      });
    }
    if (!this.validator(value)) {
      const errors = toValidationIssues(this.validator.errors);
      const first = errors[0];
      throw new ValidationError(
        `Invalid arguments for tool "${this.name}": ${first ? `${first.pointer || '/'} ${first.message}` : 'schema mismatch'}`,
        {
          data: { tool: this.name, errors },
        },
      );
    }
    return value as JsonObject;
  }

  /**
   * The action for validated arguments: the builder's action (or the default `tool.call` one),
   * with the tool's declared capabilities merged in and the arguments in `payload.arguments`.
   */
  async buildAction(args: JsonObject, context: RunContext | null): Promise<RunAction> {
    const base: RunActionInit = {
      kind: this.kind,
      name: this.name,
      payload: { arguments: args },
      capabilities: this.capabilities,
      description: this.description || null,
    };
    if (!this.definition.actionBuilder) return new RunAction(base);
    const built = await this.definition.actionBuilder(structuredClone(args), context);
    const action = built instanceof RunAction ? built : new RunAction({ ...base, ...built });
    return action.withCapabilities(this.capabilities);
  }
}

/** The tools of one agent, by name. */
export class ToolRegistry {
  private readonly tools = new Map<string, RegisteredTool>();

  register<TArgs extends JsonObject>(definition: ToolDefinition<TArgs>): RegisteredTool {
    const name = isRecord(definition) ? definition.name : undefined;
    if (typeof name === 'string' && this.tools.has(name))
      throw new ValueError(`Tool "${name}" is already registered`);
    // Schemas with an `$id` register globally in an Ajv instance, so they get a private one.
    const parameters = isRecord(definition) ? definition.parameters : undefined;
    const ajv = isRecord(parameters) && '$id' in parameters ? newAjv() : sharedAjv();
    const tool = new RegisteredTool(definition as unknown as ToolDefinition, ajv);
    this.tools.set(tool.name, tool);
    return tool;
  }

  get(name: string): RegisteredTool | undefined {
    return this.tools.get(name);
  }

  /** The tool or a ValueError naming the known ones. */
  require(name: string): RegisteredTool {
    const tool = this.tools.get(name);
    if (!tool)
      throw new ValueError(`Unknown tool: ${JSON.stringify(name)}`, {
        data: { tool: name, known: [...this.tools.keys()] },
      });
    return tool;
  }

  get declarations(): ToolDeclaration[] {
    return [...this.tools.values()].map((tool) => tool.declaration);
  }

  get names(): string[] {
    return [...this.tools.keys()];
  }
}

let shared: Ajv | undefined;

function newAjv(): Ajv {
  return new Ajv({ allErrors: true, strict: false });
}

// One instance for all agents: building Ajv (its meta-schemas) costs far more than a compile.
function sharedAjv(): Ajv {
  shared ??= newAjv();
  return shared;
}
