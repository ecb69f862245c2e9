// The OpenAPI document as an integrator gets it: served without a token at /api/v1/openapi.json, OpenAPI 3.1,
// every endpoint of the spec with its scope, every field, parameter, header and answer described, and clean
// under an external linter (Redocly CLI, recommended rules). The HTTP suites check every answer they get
// against this document (test/helpers/openapi-validate.ts); the last tests here show that check has teeth.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import packageJson from '../../package.json' with { type: 'json' };
import { type Env, ROOT, type Server, startServer, tempEnv } from '../helpers/harness.ts';
import { checkAgainstOpenApi, OPENAPI_PATH, OpenApiMismatch } from '../helpers/openapi-validate.ts';

const run = promisify(execFile);
const REDOCLY = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');

// The spec's endpoint table: method, path, scope.
const ENDPOINTS = [
  { method: 'get', path: '/api/v1/me', scope: 'user.read' },
  { method: 'get', path: '/api/v1/databases', scope: 'databases.read' },
  { method: 'get', path: '/api/v1/databases/{id}/games', scope: 'games.read' },
  { method: 'get', path: '/api/v1/games', scope: 'games.read' },
  { method: 'get', path: '/api/v1/games/{id}', scope: 'games.read' },
  { method: 'get', path: '/api/v1/changes', scope: 'games.read' },
];
const ERROR_STATUSES = ['400', '401', '403', '429', '500', '503'];

type Node = { [key: string]: unknown };
interface Operation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters?: { name: string; in: string; description?: string }[];
  responses: Record<string, Node>;
}
interface Document {
  openapi: string;
  info: Node & { license: Node; version: string };
  servers: Node[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Node>;
    responses: Record<string, Node>;
    headers: Record<string, Node>;
    securitySchemes: Record<string, Node>;
  };
}

let env: Env;
let server: Server;
let document: Document;

before(async () => {
  // A tiny rate limit: fetching the document must not count against it.
  env = tempEnv({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW: '60s' });
  server = await startServer(env);
  const response = await fetch(`${server.base}${OPENAPI_PATH}`);
  assert.equal(response.status, 200);
  document = (await response.json()) as Document;
});
after(async () => {
  await server?.stop();
  env?.cleanup();
});

function operation(path: string, method = 'get'): Operation {
  const found = document.paths[path]?.[method];
  assert.ok(found, `${method} ${path} is documented`);
  return found;
}

/** The response object behind a local $ref. */
function resolved(node: Node): Node {
  const ref = node.$ref;
  if (typeof ref !== 'string') return node;
  const [, , kind, name] = ref.split('/');
  return resolved(
    (document.components as unknown as Record<string, Record<string, Node>>)[kind as string]?.[
      name as string
    ] as Node,
  );
}

describe('serving', () => {
  test('served without a token, not counted by the rate limit, with an ETag that gives 304', async () => {
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${server.base}${OPENAPI_PATH}`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('x-ratelimit-limit'), null);
      await res.arrayBuffer();
    }
    const first = await fetch(`${server.base}${OPENAPI_PATH}`);
    await first.arrayBuffer();
    const etag = first.headers.get('etag') ?? '';
    assert.match(etag, /^W\/".+"$/);
    const again = await fetch(`${server.base}${OPENAPI_PATH}`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    const head = await fetch(`${server.base}${OPENAPI_PATH}`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    const post = await fetch(`${server.base}${OPENAPI_PATH}`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  test('OpenAPI 3.1 with title, version, GPL-3.0-or-later licence, a server and described tags', () => {
    assert.equal(document.openapi, '3.1.0');
    assert.equal(document.info.title, 'chessport API');
    assert.equal(document.info.version, packageJson.version);
    assert.equal(document.info.license.identifier, 'GPL-3.0-or-later');
    assert.ok(document.servers.length > 0);
    for (const tag of document.tags) assert.ok(tag.description, tag.name);
    const tagNames = new Set(document.tags.map((tag) => tag.name));
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const operation of Object.values(operations)) {
        assert.equal(operation.tags.length, 1, path);
        assert.ok(tagNames.has(operation.tags[0] as string), path);
      }
    }
  });

  test('the description carries the decisions a client depends on', () => {
    const text = String(document.info.description);
    for (const topic of [
      'Link',
      'rel="next"',
      'nextCursor',
      'hasMore',
      'tombstones',
      'null',
      'pairwise',
      'X-RateLimit-Remaining',
      'Retry-After',
      'If-None-Match',
      '405',
      'HEAD',
      'since',
    ]) {
      assert.ok(text.includes(topic), `info.description mentions ${topic}`);
    }
  });
});

describe('endpoints and security', () => {
  test('every endpoint of the spec, with its method, and nothing else (no probes, metrics or docs)', () => {
    const listed = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method} ${path}`),
    );
    assert.deepEqual(listed.sort(), ENDPOINTS.map(({ method, path }) => `${method} ${path}`).sort());
  });

  test('the bearer scheme names every scope; each operation requires the spec’s scope', () => {
    const schemes = Object.entries(document.components.securitySchemes);
    assert.equal(schemes.length, 1);
    const [name, scheme] = schemes[0] as [string, Node];
    assert.equal(scheme.type, 'http');
    assert.equal(scheme.scheme, 'bearer');
    for (const scope of ['user.read', 'databases.read', 'games.read']) {
      assert.ok(String(scheme.description).includes(scope), scope);
    }
    for (const { method, path, scope } of ENDPOINTS) {
      const { security, operationId, summary, description } = operation(path, method);
      assert.deepEqual(security, [{ [name]: [scope] }], path);
      assert.ok(operationId && summary && description, path);
    }
  });

  test('every answer each route gives is documented, errors in the Error shape with their headers', () => {
    for (const { method, path } of ENDPOINTS) {
      const responses = operation(path, method).responses;
      const expected = ['200', '304', ...ERROR_STATUSES, ...(path.includes('{id}') ? ['404'] : [])];
      assert.deepEqual(Object.keys(responses).sort(), expected.sort(), path);
      const header = (status: string, name: string) => {
        const found = (resolved(responses[status] as Node).headers as Record<string, Node>)[name];
        return found && resolved(found);
      };
      for (const status of ERROR_STATUSES) {
        const response = resolved(responses[status] as Node);
        const content = response.content as Record<string, { schema: Node }>;
        assert.deepEqual(content['application/json']?.schema, { $ref: '#/components/schemas/Error' });
        assert.equal(header(status, 'X-Request-Id')?.required, true);
      }
      assert.equal(header('401', 'WWW-Authenticate')?.required, true);
      assert.equal(header('403', 'WWW-Authenticate')?.required, true);
      assert.equal(header('429', 'Retry-After')?.required, true);
      assert.equal(header('503', 'Retry-After')?.required, true);
      for (const name of [
        'ETag',
        'Cache-Control',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
      ]) {
        assert.equal(header('200', name)?.required, true, `${path} 200 ${name}`);
        assert.equal(header('304', name)?.required, true, `${path} 304 ${name}`);
      }
      for (const status of ['401', '403', '429']) {
        assert.equal(header(status, 'X-RateLimit-Remaining')?.required, true, `${path} ${status}`);
      }
    }
    const lists = ['/api/v1/games', '/api/v1/databases/{id}/games'];
    for (const path of lists) {
      const ok = operation(path).responses['200'] as Node;
      assert.ok((ok.headers as Node).Link, `${path} documents Link`);
    }
    for (const path of ['/api/v1/games/{id}', '/api/v1/databases/{id}/games']) {
      const ok = operation(path).responses['200'] as Node;
      assert.ok((ok.content as Node)['application/x-chess-pgn'], `${path} documents PGN`);
    }
  });

  test('each header is described once, in components/headers, and each shared answer in components/responses', () => {
    const used = new Set<string>();
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, { responses }] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(responses)) {
          if (status !== '200') {
            assert.match(String(response.$ref), /^#\/components\/responses\//, `${method} ${path} ${status}`);
          }
          for (const [name, header] of Object.entries(
            (resolved(response).headers ?? {}) as Record<string, Node>,
          )) {
            const ref = String(header.$ref);
            assert.match(
              ref,
              new RegExp(`^#/components/headers/${name}(\\.optional)?$`),
              `${path} ${status} ${name}`,
            );
            used.add(ref.split('/').at(-1) as string);
          }
        }
      }
    }
    assert.deepEqual([...used].sort(), Object.keys(document.components.headers).sort());
    // The rate-limit headers of a 400 may be missing (a request refused before it was counted), not those
    // of a 401: one header, two entries.
    assert.equal(document.components.headers['X-RateLimit-Limit']?.required, true);
    assert.equal(document.components.headers['X-RateLimit-Limit.optional']?.required, undefined);
    assert.equal(
      document.components.headers['X-RateLimit-Limit.optional']?.description,
      document.components.headers['X-RateLimit-Limit']?.description,
    );
  });
});

describe('schemas and descriptions', () => {
  test('the shared schemas are components referenced by $ref, not inlined copies', () => {
    const names = Object.keys(document.components.schemas).sort();
    assert.deepEqual(names, ['Change', 'Database', 'Error', 'GameDetail', 'GameSummary', 'Player', 'User']);
    const summary = document.components.schemas.GameSummary as { properties: Record<string, Node> };
    assert.deepEqual(summary.properties.white, { $ref: '#/components/schemas/Player' });
    const detail = operation('/api/v1/games/{id}').responses['200'] as Node;
    const json = (detail.content as Record<string, { schema: { properties: Node } }>)['application/json'];
    assert.deepEqual(json?.schema.properties.data, { $ref: '#/components/schemas/GameDetail' });
  });

  test('null is a value, never an omission: every field required, unknowns nullable', () => {
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      const properties = Object.keys(schema.properties as Node);
      assert.deepEqual([...(schema.required as string[])].sort(), properties.sort(), name);
    }
    const player = document.components.schemas.Player as { properties: Record<string, Node> };
    assert.deepEqual(player.properties.elo?.type, ['integer', 'null']);
  });

  test('every field, parameter, header and answer has a description', () => {
    const missing: string[] = [];
    const checkSchema = (schema: Node, where: string) => {
      if (schema.$ref) return; // described at its component
      if (!schema.description) missing.push(where);
      for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Node>)) {
        checkSchema(property, `${where}.${name}`);
      }
      if (schema.items) checkSchema(schema.items as Node, `${where}[]`);
    };
    for (const [name, schema] of Object.entries(document.components.schemas)) checkSchema(schema, name);
    const checkResponse = (response: Node, where: string) => {
      if (!response.description || response.description === 'Default Response') missing.push(where);
      for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Node>)) {
        if (!resolved(header).description) missing.push(`${where} header ${name}`);
      }
      for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, Node>)) {
        checkSchema(media.schema as Node, `${where} ${type}`);
      }
    };
    for (const [name, response] of Object.entries(document.components.responses)) {
      checkResponse(response, `responses.${name}`);
    }
    for (const [name, header] of Object.entries(document.components.headers)) {
      if (!header.description) missing.push(`headers.${name}`);
    }
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const parameter of operation.parameters ?? []) {
          if (!parameter.description) missing.push(`${method} ${path} parameter ${parameter.name}`);
        }
        for (const [status, response] of Object.entries(operation.responses)) {
          if (!response.$ref) checkResponse(response, `${method} ${path} ${status}`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });
});

describe('external linter', () => {
  test('Redocly CLI (recommended rules) finds no error and no warning', async (t) => {
    if (!existsSync(REDOCLY)) return t.skip('Redocly CLI is not installed (npm install)');
    const file = join(env.dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    // Nothing leaves the machine: no usage data, no update check.
    const { stdout } = await run(
      process.execPath,
      [REDOCLY, 'lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', file],
      {
        cwd: ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 16 << 20,
      },
    ).catch((error: { stdout?: string; stderr?: string }) => {
      // Redocly exits 1 on errors; the report is on stdout all the same.
      if (error.stdout) return { stdout: error.stdout };
      throw new Error(`redocly lint failed: ${error.stderr}`);
    });
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    };
    const problems = report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`);
    assert.deepEqual(problems, []);
    assert.deepEqual([report.totals.errors, report.totals.warnings], [0, 0]);
  });
});

describe('the suites’ answer check', () => {
  const exchange = (path: string, status: number, headers: Record<string, string>, body: unknown) => ({
    url: `${server.base}${path}`,
    method: 'GET',
    status,
    headers: new Headers({ 'content-type': 'application/json; charset=utf-8', ...headers }),
    text: body === undefined ? '' : JSON.stringify(body),
  });
  const counted = {
    'x-request-id': 'r1',
    'x-ratelimit-limit': '600',
    'x-ratelimit-remaining': '599',
    'x-ratelimit-reset': '60',
    'ratelimit-policy': '"app-user";q=600;w=60',
    ratelimit: '"app-user";r=599;t=60',
  };
  const ok = { ...counted, etag: '"x"', 'cache-control': 'private, no-cache', vary: 'authorization' };
  const me = { id: '0193c0de-4f2a-8000-8000-000000000000', name: null, email: null, image: null };

  test('an answer as documented passes', async () => {
    await checkAgainstOpenApi(exchange('/api/v1/me', 200, ok, { data: me }));
    await checkAgainstOpenApi(
      exchange('/api/v1/nowhere', 404, {}, { error: 'not_found', error_description: 'No.' }),
    );
  });

  test('an undocumented status, a missing field, a missing required header or a wrong type fails', async () => {
    const { email: _, ...withoutEmail } = me;
    const { etag: __, ...withoutEtag } = ok;
    const wrong = [
      exchange('/api/v1/me', 418, ok, { data: me }),
      exchange('/api/v1/me', 404, counted, { error: 'not_found', error_description: 'No.' }),
      exchange('/api/v1/me', 200, ok, { data: withoutEmail }),
      exchange('/api/v1/me', 200, withoutEtag, { data: me }),
      exchange('/api/v1/me', 200, { ...ok, 'content-type': 'text/plain' }, { data: me }),
      exchange('/api/v1/me', 401, counted, { error: 'invalid_token', error_description: 'No.' }),
      exchange('/api/v1/games?limit=1', 200, { ...ok, 'x-ratelimit-remaining': 'many' }, { data: [] }),
      exchange('/api/v1/games', 200, ok, { data: [{ id: 'x' }] }),
    ];
    for (const answer of wrong) {
      await assert.rejects(checkAgainstOpenApi(answer), OpenApiMismatch, `${answer.url} ${answer.status}`);
    }
  });
});
