import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { APIKeyAuth } from '@agent/auth';
import { createArtifact, createMessage, messageText } from '@agent/core';
import { Agent } from '@agent/runtime';
import { HTTPTransport } from '@agent/transport-http';
import ts from 'typescript';
import { expectSuccess, runNode } from './test-support/child-process.js';

/**
 * The code blocks of the packages' READMEs: each one either runs here as a program of its own, or
 * says which test or example runs it. A README whose code drifts from the API fails this test.
 */
const repo = join(__dirname, '..', '..');
const out = join(__dirname, '..', 'dist', 'readme-blocks');

interface CodeBlock {
  readme: string;
  lang: string;
  code: string;
  /** The two paragraphs before the block and the two after it. */
  around: string;
}

interface RunnableBlock {
  readme: string;
  /** The block is the first ts/js block after this text. */
  after: string;
  /** Imports the block leaves out because the README shows them once, above it. */
  prelude?: string;
  /** Code run after the block, to use what it only defines. */
  suffix?: string;
  /** Whether the block talks to the reference server at http://127.0.0.1:8080 (played by `commandServer`). */
  referenceServer?: boolean;
  env?: Record<string, string>;
  /** Lines the program must print, in order. */
  expect: string[];
}

const RUNNABLE: RunnableBlock[] = [
  { readme: 'packages/core/README.md', after: '# `@agent/core`', expect: ['404 TASK_NOT_FOUND', 'true'] },
  {
    readme: 'packages/server/README.md',
    after: '## Example: a wire adapter',
    expect: ['completed', 'task.status'],
  },
  {
    readme: 'packages/runtime/README.md',
    after: 'A real model over any OpenAI-compatible API',
    prelude: "import { OpenAICompatibleLLM } from '@agent/runtime';",
    env: { OPENAI_API_KEY: 'sk-not-used' },
    expect: [],
  },
  {
    readme: 'packages/runtime/README.md',
    after: 'Custom logic instead of (or around) the loop',
    expect: ['completed'],
  },
  {
    readme: 'packages/auth/README.md',
    after: '### `APIKeyAuth`',
    prelude: "import { APIKeyAuth } from '@agent/auth';",
    expect: [],
  },
  {
    readme: 'packages/auth/README.md',
    after: '### `BearerTokenAuth`',
    prelude: "import { BearerTokenAuth } from '@agent/auth';",
    env: { JWT_SECRET: 'a-secret-from-the-environment' },
    expect: [],
  },
  {
    readme: 'packages/auth/README.md',
    after: '### `BasicAuth`',
    prelude: "import { BasicAuth } from '@agent/auth';",
    expect: [],
  },
  {
    readme: 'packages/auth/README.md',
    after: '### `OAuth2DelegationAuth`',
    prelude: "import { OAuth2DelegationAuth } from '@agent/auth';",
    env: { CLIENT_SECRET: 'a-secret-from-the-environment' },
    expect: [],
  },
  {
    readme: 'packages/auth/README.md',
    after: '## Writing a custom authenticator',
    suffix:
      "console.log((await new SessionCookieAuth(new Map([['sid-1', 'alice']])).authenticate('sid-1')).principalId);",
    expect: ['alice'],
  },
  {
    readme: 'packages/client/README.md',
    after: '## Example',
    referenceServer: true,
    expect: ['hello', 'task.artifact', 'task.status', 'canceled no longer needed', 'completed'],
  },
  { readme: 'packages/transport-http/README.md', after: '## Example', expect: ['completed', 'task.status'] },
  {
    readme: 'packages/transport-http/README.md',
    after: '## Extra routes',
    expect: ['buy milk', 'true Note todo/today not found'],
  },
  {
    readme: 'packages/transport-http/README.md',
    after: '## OpenAPI document',
    expect: [
      '204 https://app.example.com',
      '401 https://app.example.com',
      '3.1.0 /.well-known/agent.json /healthz /openapi.json /readyz /tasks /tasks/cancel /tasks/stream /tasks/{id} /tasks/{id}/events',
    ],
  },
  {
    readme: 'packages/a2a/README.md',
    after: '## Example',
    expect: ['echo', 'echo: hello', 'completed'],
  },
  {
    readme: 'packages/registry/README.md',
    after: '## Example',
    expect: ['translator true', 'bonjour', 'Agent translator is not registered'],
  },
  {
    readme: 'packages/transport-sse/README.md',
    after: '## Example',
    expect: ['completed', 'task.status completed'],
  },
  {
    readme: 'packages/transport-sse/README.md',
    after: '## CORS',
    expect: ['204 Content-Type, X-API-Key, Last-Event-ID', 'https://app.example.com completed'],
  },
  { readme: 'packages/transport-ws/README.md', after: '## Example', expect: ['task.status'] },
  {
    readme: 'packages/transport-grpc/README.md',
    after: '## Example',
    expect: ['grpc://127.0.0.1:', 'completed'],
  },
  {
    readme: 'packages/transport-memory/README.md',
    after: '## Example',
    expect: ['completed', 'task.status', 'Missing credentials'],
  },
];

/** A paragraph near a block that says what runs it. */
const POINTER = /A test\s+runs\s+(this|it)|Runs\s+(as|in)\s/;

function readmes(): string[] {
  return ['packages', 'apps'].flatMap((group) =>
    readdirSync(join(repo, group))
      .map((name) => `${group}/${name}/README.md`)
      .filter((file) => existsSync(join(repo, file))),
  );
}

function codeBlocks(readme: string): CodeBlock[] {
  const text = readFileSync(join(repo, readme), 'utf8');
  const blocks: CodeBlock[] = [];
  for (const match of text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    const before = text
      .slice(0, match.index)
      .trimEnd()
      .split(/\n\s*\n/)
      .slice(-2);
    const after = text
      .slice(match.index + match[0].length)
      .trimStart()
      .split(/\n\s*\n/)
      .slice(0, 2);
    blocks.push({ readme, lang: match[1], code: match[2], around: [...before, ...after].join('\n') });
  }
  return blocks;
}

function findRunnable(spec: RunnableBlock): CodeBlock {
  const text = readFileSync(join(repo, spec.readme), 'utf8');
  const start = text.indexOf(spec.after);
  if (start === -1) throw new Error(`${spec.readme} no longer has "${spec.after}"`);
  const match = /^```(ts|js)\n([\s\S]*?)^```$/m.exec(text.slice(start + spec.after.length));
  if (!match) throw new Error(`${spec.readme} has no ts/js block after "${spec.after}"`);
  return { readme: spec.readme, lang: match[1], code: match[2], around: '' };
}

/**
 * The block as a TypeScript module: imports stay on top, everything else runs inside an async
 * function, so a block may use `await` at its top level as the READMEs do.
 */
function toSource(spec: RunnableBlock, code: string): string {
  const imports: string[] = [spec.prelude ?? ''];
  const body = code
    .replace(/^import\s[\s\S]*?from\s+'[^']+';[ \t]*$/gm, (statement) => {
      imports.push(statement);
      return '';
    })
    .replace(/^export /gm, '');
  return `${imports.join('\n')}\nvoid (async () => {\n${body}\n${spec.suffix ?? ''}\n})().catch((error) => {\n  console.error(error);\n  process.exitCode = 1;\n});\nexport {};\n`;
}

const COMPILER_OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  strict: true,
  esModuleInterop: true,
  skipLibCheck: true,
  types: ['node'],
  noEmit: true,
};

function slug(spec: RunnableBlock): string {
  return `${spec.readme.split('/')[1]}-${spec.after}`
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
}

/**
 * Plays the reference server for the client README: API key `my-key-123` and the commands it uses
 * (`echo <text>`, `stream <n>`, `sleep <ms>`), with the reference agent's replies.
 */
function commandServer(): HTTPTransport {
  const agent = new Agent({
    card: { name: 'reference-agent' },
    execute: async (task, run) => {
      const [command, argument = ''] = messageText(task.messages.at(-1)).split(/ (.*)/s);
      if (command === 'echo') {
        await run.addMessage(createMessage(argument, { role: 'agent' }));
        return;
      }
      for (let i = 1; i <= Number(argument); i += command === 'sleep' ? 100 : 1) {
        if (command === 'sleep') await run.sleep(100);
        else await run.addArtifact(createArtifact(`chunk ${i}`), { append: i > 1 });
      }
      await run.addMessage(createMessage(`${command} done`, { role: 'agent' }));
    },
  });
  const server = new HTTPTransport({
    url: 'http://127.0.0.1:0',
    authenticator: new APIKeyAuth({ validKeys: { 'my-key-123': [] } }),
  });
  server.bind(agent);
  return server;
}

describe('README code blocks', () => {
  mkdirSync(out, { recursive: true });
  const referenceServer = commandServer();
  // Started by the first test that needs it: concurrent tests do not wait for beforeAll.
  let serving: Promise<void> | undefined;
  afterAll(() => referenceServer.stop());

  // Each block is a child process of its own, so they can run side by side.
  it.concurrent.each(RUNNABLE.map((spec) => [`${spec.readme}, after "${spec.after}"`, spec] as const))(
    '%s runs',
    async (_name, spec) => {
      const block = findRunnable(spec);
      const file = join(out, `${slug(spec)}.js`);
      if (spec.referenceServer) await (serving ??= referenceServer.start());
      const code = spec.referenceServer
        ? block.code.replaceAll('http://127.0.0.1:8080', referenceServer.url)
        : block.code;
      const program = ts.transpileModule(toSource(spec, code), {
        compilerOptions: { ...COMPILER_OPTIONS, module: ts.ModuleKind.CommonJS, noEmit: false },
      });
      writeFileSync(file, program.outputText);
      expectSuccess(`${spec.readme} block`, await runNode(file, spec.env), spec.expect);
    },
    45_000,
  );

  it("the runnable blocks type-check against the packages' declarations", () => {
    const files = RUNNABLE.map((spec) => {
      const file = join(out, `${slug(spec)}.ts`);
      writeFileSync(file, toSource(spec, findRunnable(spec).code));
      return file;
    });
    const program = ts.createProgram(files, COMPILER_OPTIONS);
    const errors = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      if (!diagnostic.file || diagnostic.start === undefined) return message;
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      const text = diagnostic.file.text.split('\n')[line]?.trim();
      return `${diagnostic.file.fileName.split('/').at(-1)}: ${message}\n    ${text}`;
    });
    expect(errors).toEqual([]);
  }, 60_000);

  it('every other ts/js block says which test or example runs it', () => {
    const runnable = new Set(RUNNABLE.map((spec) => findRunnable(spec).code));
    const unaccounted: string[] = [];
    for (const readme of readmes()) {
      for (const block of codeBlocks(readme)) {
        if (!['ts', 'js'].includes(block.lang) || runnable.has(block.code)) continue;
        const pointer = POINTER.exec(block.around);
        if (!pointer) {
          unaccounted.push(`${readme}: ${block.code.split('\n')[0]}`);
          continue;
        }
        for (const [, example] of block.around.matchAll(/`(examples\/src\/[\w-]+\.ts)`/g)) {
          if (!existsSync(join(repo, example))) unaccounted.push(`${readme}: ${example} does not exist`);
        }
      }
    }
    expect(unaccounted).toEqual([]);
  });
});
