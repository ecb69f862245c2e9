// The OpenAPI document as an integrator gets it: served without a token at /api/v1/openapi.json (compressed
// when asked), OpenAPI 3.1, every endpoint of the spec with its scope, every field, parameter, header and
// answer described once, and clean under an external linter (Redocly CLI, recommended rules). A black-box
// pass asks every operation for every answer a client can provoke and checks that the document names each
// status and header, and that each answer and header it names is one the server gives. The HTTP suites
// check every answer they get against this document (test/helpers/openapi-validate.ts); the last tests
// here show that check has teeth.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import packageJson from '../../package.json' with { type: 'json' };
import { type Env, FIXTURES, ROOT, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, seed, serveInProcess } from '../helpers/in-process.ts';
import {
  checkAgainstOpenApi,
  documentedFor,
  OPENAPI_PATH,
  OpenApiMismatch,
  OTHER_METHODS,
} from '../helpers/openapi-validate.ts';

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
interface OtherMethod {
  description: string;
  methods?: string[];
  responses?: Record<string, Node>;
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
  [OTHER_METHODS]: Record<'preflight' | 'other', OtherMethod> & { description: string };
}

let env: Env;
let server: InProcessServer;
let document: Document;

before(async () => {
  // A tiny rate limit: fetching the document must not count against it.
  env = tempEnv({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW: '60s' });
  server = await serveInProcess(env);
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
    assert.equal(post.headers.get('allow'), 'GET, HEAD, OPTIONS');
  });

  test('compressed when asked (br, gzip), the same document in every coding, HEAD alike', async () => {
    const plain = await send(server.base, OPENAPI_PATH);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.deepEqual(JSON.parse(plain.body.toString()), document);
    assert.match(String(plain.headers.vary), /accept-encoding/i);
    for (const [coding, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const packed = await send(server.base, OPENAPI_PATH, 'GET', { 'accept-encoding': coding });
      assert.equal(packed.headers['content-encoding'], coding);
      assert.deepEqual(decode(packed.body), plain.body);
      // Sizes in docs/performance.md.
      assert.ok(packed.body.length * 4 < plain.body.length, `${coding}: ${packed.body.length} bytes`);
      assert.equal(packed.headers.etag, plain.headers.etag, 'one weak ETag names every coding');
      const head = await send(server.base, OPENAPI_PATH, 'HEAD', { 'accept-encoding': coding });
      assert.equal(head.headers['content-encoding'], coding);
      assert.equal(head.headers['content-length'], String(packed.body.length));
      assert.equal(head.body.length, 0);
      const again = await send(server.base, OPENAPI_PATH, 'GET', {
        'accept-encoding': coding,
        'if-none-match': String(plain.headers.etag),
      });
      assert.equal(again.status, 304);
      assert.equal(again.body.length, 0);
    }
  });

  test('docs/openapi.json, the committed contract, is the document served', () => {
    const committed = readFileSync(join(ROOT, 'docs/openapi.json'), 'utf8');
    assert.ok(
      committed === `${JSON.stringify(document, null, 2)}\n`,
      'docs/openapi.json differs from the document the server serves: run `npm run openapi` and commit it',
    );
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
      'expand=game',
      'X-Total-Count',
      'rel="last"',
      'ChessportGameId',
    ]) {
      assert.ok(text.includes(topic), `info.description mentions ${topic}`);
    }
  });
});

describe('endpoints and security', () => {
  test('every endpoint of the spec, with GET, HEAD and OPTIONS, and nothing else (no probes, metrics or docs)', () => {
    const listed = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method} ${path}`),
    );
    const expected = ENDPOINTS.flatMap(({ path }) => ['get', 'head', 'options'].map((m) => `${m} ${path}`));
    assert.deepEqual(listed.sort(), expected.sort());
  });

  test('HEAD is GET without the body; OPTIONS answers 204 with Allow, without a token', () => {
    for (const { path, method } of ENDPOINTS) {
      const get = operation(path, method);
      const head = operation(path, 'head');
      assert.equal(head.operationId, `${get.operationId}Head`);
      assert.deepEqual(head.security, get.security, path);
      assert.deepEqual(head.parameters, get.parameters, path);
      assert.deepEqual(Object.keys(head.responses).sort(), Object.keys(get.responses).sort(), path);
      const { content: _, ...withoutBody } = get.responses['200'] as Node;
      assert.deepEqual(head.responses['200'], withoutBody, `${path}: HEAD's 200 has GET's headers, no body`);
      assert.ok(get.responses['200']?.content, path);

      const options = operation(path, 'options');
      assert.equal(options.operationId, `${get.operationId}Options`);
      assert.deepEqual(options.security, [], `${path}: no token`);
      assert.deepEqual(Object.keys(options.responses).sort(), ['204', '4XX']);
      const allowed = resolved(options.responses['204'] as Node);
      assert.deepEqual(resolved((allowed.headers as Record<string, Node>).Allow as Node), {
        description: 'The methods the path answers.',
        required: true,
        schema: { type: 'string', const: 'GET, HEAD, OPTIONS' },
      });
      assert.equal(allowed.content, undefined);
    }
  });

  test('the bearer and oauth2 schemes name every scope; each operation requires the spec’s scope of either', () => {
    const schemes = document.components.securitySchemes;
    assert.deepEqual(Object.keys(schemes).sort(), ['bearer', 'oauth2']);
    const bearer = schemes.bearer as Node;
    assert.equal(bearer.type, 'http');
    assert.equal(bearer.scheme, 'bearer');
    const oauth2 = schemes.oauth2 as Node;
    assert.equal(oauth2.type, 'oauth2');
    const flows = oauth2.flows as Record<string, Node>;
    const code = flows.authorizationCode as Node;
    assert.equal(code.authorizationUrl, '/oauth/authorize');
    assert.equal(code.tokenUrl, '/oauth/token');
    assert.equal((flows['x-deviceAuthorization'] as Node).deviceAuthorizationUrl, '/oauth/device/auth');
    for (const scope of ['user.read', 'databases.read', 'games.read']) {
      assert.ok(String(bearer.description).includes(scope), scope);
      assert.ok(scope in (code.scopes as Node), scope);
    }
    for (const { method, path, scope } of ENDPOINTS) {
      const { security, operationId, summary, description } = operation(path, method);
      assert.deepEqual(security, [{ bearer: [scope] }, { oauth2: [scope] }], path);
      assert.ok(operationId && summary && description, path);
    }
  });

  test('every answer each route gives is documented, errors in the ErrorBody shape with their headers', () => {
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
        assert.deepEqual(content['application/json']?.schema, { $ref: '#/components/schemas/ErrorBody' });
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

  test('each header described once in components/headers, each shared answer in components/responses', () => {
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

  test('x-other-methods: the CORS preflight, 405 with Allow for every method without an operation', () => {
    const other = document[OTHER_METHODS];
    for (const topic of ['CORS', 'rate limit']) assert.ok(other.description.includes(topic), topic);
    assert.deepEqual(Object.keys(other).sort(), ['description', 'other', 'preflight']);
    const header = (entry: OtherMethod, status: string, name: string) => {
      const headers = (entry.responses?.[status]?.headers ?? {}) as Record<string, Node>;
      return resolved(headers[name] ?? {});
    };
    assert.equal(header(other.preflight, '204', 'Access-Control-Allow-Methods').required, true);
    assert.deepEqual(header(other.other, '405', 'Allow').schema, {
      type: 'string',
      const: 'GET, HEAD, OPTIONS',
    });
    assert.equal(header(other.other, '405', 'X-Request-Id').required, true);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'QUERY', 'PROPFIND']) {
      assert.ok(other.other.methods?.includes(method), method);
    }
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'CONNECT'])
      assert.ok(!other.other.methods?.includes(method));
    const content = other.other.responses?.['405']?.content as Record<string, Node>;
    assert.deepEqual(content['application/json']?.schema, { $ref: '#/components/schemas/ErrorBody' });
    assert.ok(String(document.info.description).includes(OTHER_METHODS), 'info.description points to it');
  });
});

describe('schemas and descriptions', () => {
  test('the shared schemas are components referenced by $ref, not inlined copies', () => {
    const names = Object.keys(document.components.schemas).sort();
    assert.deepEqual(names, [
      'Change',
      'Database',
      'ErrorBody',
      'GameDetail',
      'GameSummary',
      'Player',
      'User',
    ]);
    const summary = document.components.schemas.GameSummary as { properties: Record<string, Node> };
    assert.deepEqual(summary.properties.white, { $ref: '#/components/schemas/Player' });
    const detail = operation('/api/v1/games/{id}').responses['200'] as Node;
    const json = (detail.content as Record<string, { schema: { properties: Node } }>)['application/json'];
    assert.deepEqual(json?.schema.properties.data, { $ref: '#/components/schemas/GameDetail' });
  });

  test('null is a value, never an omission: every field required, unknowns nullable', () => {
    // A field a parameter asks for is there on every item when asked for, and absent without it.
    const askedFor: Record<string, string[]> = { Change: ['game'] };
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      const properties = Object.keys(schema.properties as Node).filter((p) => !askedFor[name]?.includes(p));
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
    for (const [name, entry] of Object.entries(document[OTHER_METHODS])) {
      if (typeof entry === 'string') continue;
      if (!entry.description) missing.push(`${OTHER_METHODS}.${name}`);
      for (const [status, response] of Object.entries(entry.responses ?? {})) {
        checkResponse(response, `${OTHER_METHODS}.${name} ${status}`);
      }
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

interface Sent {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as sent, compressed or not. */
  body: Buffer;
}

/** One request over node:http: a header given as an array goes out as that many lines. */
function send(
  base: string,
  path: string,
  method = 'GET',
  headers: Record<string, string | string[]> = {},
): Promise<Sent> {
  const url = new URL(base + path);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('black box: every answer a client can provoke, against the document', () => {
  // The statuses no request from outside provokes on a healthy server, and where they are seen instead.
  const UNPROVOKED: Record<string, string> = {
    '500': 'a fault in the server; no request makes one',
    '503': 'the store cut off: production-faults.test.ts, whose answers the validator checks',
  };
  let roomy: InProcessServer;
  /** Operation -> documented status -> the documented headers seen on its answers (lower case). */
  const seen = new Map<string, Map<string, Set<string>>>();
  let tokens: { all: string; userOnly: string; gamesOnly: string; spender: string };
  let paths: Record<string, string>;

  before(async () => {
    const s = seed(server.store);
    await s.addUser('alice');
    for (const app of ['app-one', 'app-spender']) await s.addApp(app);
    const database = await s.importPgn(join(FIXTURES, 'api/alice.pgn'), 'alice', 'Main');
    const issue = (app: string, scopes: string) => s.issueToken('alice', app, scopes);
    tokens = {
      all: await issue('app-one', 'user.read,databases.read,games.read'),
      userOnly: await issue('app-one', 'user.read'),
      gamesOnly: await issue('app-one', 'games.read'),
      spender: await issue('app-spender', 'user.read,databases.read,games.read'),
    };
    // The file's server allows 2 requests a minute (for 429s); this one all the others. It counts at most one
    // match of a filter, so that a filter of two games says X-Total-Count-Exceeds.
    roomy = await serveInProcess(env, { RATE_LIMIT_MAX: '100000', FILTER_TOTAL_MAX: '1' });
    const games = await send(roomy.base, '/api/v1/games?limit=1', 'GET', bearer(tokens.all));
    const [game] = (JSON.parse(games.body.toString()) as { data: { id: string }[] }).data;
    paths = {
      '/api/v1/me': '/api/v1/me',
      '/api/v1/databases': '/api/v1/databases',
      '/api/v1/databases/{id}/games': `/api/v1/databases/${database.slug}/games`,
      '/api/v1/games': '/api/v1/games',
      '/api/v1/games/{id}': `/api/v1/games/${game?.id}`,
      '/api/v1/changes': '/api/v1/changes',
    };
  });
  after(async () => roomy?.stop());

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  /** Sends, checks the expected status and the answer against the document, and records what it shows. */
  async function expect(
    base: string,
    path: string,
    method: string,
    headers: Record<string, string | string[]>,
    status: number,
  ): Promise<Sent> {
    const answer = await send(base, path, method, headers);
    assert.equal(answer.status, status, `${method} ${path} ${JSON.stringify(headers)}`);
    const coding = answer.body.length === 0 ? undefined : answer.headers['content-encoding'];
    const body =
      coding === 'br'
        ? brotliDecompressSync(answer.body)
        : coding === 'gzip'
          ? gunzipSync(answer.body)
          : answer.body;
    const exchange = {
      url: `${base}${path}`,
      method,
      status: answer.status,
      headers: new Headers(
        Object.entries(answer.headers).map(([name, value]) => [
          name,
          ([] as string[]).concat(value ?? []).join(', '),
        ]),
      ),
      text: body.toString(),
    };
    await checkAgainstOpenApi(exchange);
    const documented = await documentedFor(exchange);
    assert.ok(documented, `${method} ${path} is on a documented path`);
    const statuses = seen.get(documented.operation) ?? new Map<string, Set<string>>();
    const names = statuses.get(documented.status) ?? new Set<string>();
    for (const name of Object.keys(answer.headers)) if (documented.headers.has(name)) names.add(name);
    statuses.set(documented.status, names);
    seen.set(documented.operation, statuses);
    return answer;
  }

  test('each operation: success, HEAD, 304, compressed, PGN, paging, 400, 401, 403, 404', async () => {
    for (const { path: template, scope } of ENDPOINTS) {
      const path = paths[template] as string;
      const all = bearer(tokens.all);
      const ok = await expect(roomy.base, path, 'GET', all, 200);
      await expect(roomy.base, path, 'HEAD', all, 200);
      await expect(roomy.base, path, 'GET', { ...all, 'if-none-match': String(ok.headers.etag) }, 304);
      await expect(roomy.base, path, 'GET', { ...all, 'accept-encoding': 'br' }, 200);
      await expect(roomy.base, path, 'GET', { 'accept-encoding': 'gzip' }, 401);
      await expect(roomy.base, path, 'GET', bearer('cp_unknown'), 401);
      await expect(roomy.base, path, 'GET', { authorization: [`Bearer ${tokens.all}`, 'Bearer cp_x'] }, 400);
      const lacking = scope === 'user.read' ? tokens.gamesOnly : tokens.userOnly;
      await expect(roomy.base, path, 'GET', bearer(lacking), 403);
      await expect(roomy.base, `${path}?limt=10`, 'GET', all, 400);
      const parameters = (operation(template).parameters ?? []).map(({ name }) => name);
      if (parameters.includes('offset')) {
        const page = await expect(roomy.base, `${path}?limit=1`, 'GET', all, 200);
        assert.match(String(page.headers.link), /rel="next"/);
        const second = await expect(roomy.base, `${path}?limit=1&offset=1`, 'GET', all, 200);
        const etag = String(second.headers.etag);
        await expect(roomy.base, `${path}?limit=1&offset=1`, 'GET', { ...all, 'if-none-match': etag }, 304);
        await expect(roomy.base, `${path}?limit=0`, 'GET', all, 400);
      }
      if (parameters.includes('updatedSince')) {
        // Every game matches: more than the roomy server counts.
        const broad = `${path}?limit=1&updatedSince=2000-01-01T00:00:00Z`;
        const page = await expect(roomy.base, broad, 'GET', all, 200);
        assert.equal(page.headers['x-total-count-exceeds'], '1');
        const etag = String(page.headers.etag);
        await expect(roomy.base, broad, 'GET', { ...all, 'if-none-match': etag }, 304);
      }
      if (parameters.includes('format')) {
        const pgn = await expect(roomy.base, `${path}?format=pgn`, 'GET', all, 200);
        assert.match(String(pgn.headers['content-disposition']), /^attachment; filename=".+\.pgn"$/);
        await expect(roomy.base, path, 'GET', { ...all, accept: 'application/x-chess-pgn' }, 200);
        const etag = String(pgn.headers.etag);
        await expect(roomy.base, `${path}?format=pgn`, 'GET', { ...all, 'if-none-match': etag }, 304);
        await expect(roomy.base, `${path}?format=txt`, 'GET', all, 400);
      }
      if (template.includes('{id}')) {
        await expect(roomy.base, path.replace(/[^/]+(\/games)?$/, 'nope$1'), 'GET', all, 404);
        await expect(
          roomy.base,
          path.replace(/[^/]+(\/games)?$/, '0193c0de-4f2a-7000-8000-000000000000$1'),
          'GET',
          all,
          404,
        );
      }
    }
  });

  test('each operation: 429 with Retry-After once the app and user have spent the window', async () => {
    const spender = bearer(tokens.spender);
    // The file's server allows 2 requests per window.
    for (let i = 0; i < 2; i++) await expect(server.base, '/api/v1/me', 'GET', spender, 200);
    for (const { path: template } of ENDPOINTS) {
      const path = paths[template] as string;
      await expect(server.base, path, 'GET', spender, 429);
      await expect(server.base, path, 'HEAD', spender, 429);
    }
  });

  test('each path: OPTIONS, a CORS preflight, and 405 for every other method', async () => {
    const methods = document[OTHER_METHODS].other.methods ?? [];
    for (const path of Object.values(paths)) {
      await expect(roomy.base, path, 'OPTIONS', {}, 204);
      // Refused before any operation: an expectation the server cannot meet.
      await expect(roomy.base, path, 'OPTIONS', { expect: 'nope' }, 417);
      const preflight = await expect(
        roomy.base,
        path,
        'OPTIONS',
        {
          origin: 'https://app.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
        204,
      );
      assert.equal(preflight.headers['access-control-allow-origin'], '*');
      for (const method of methods) {
        // Refused before the body and the token: a body of broken JSON and a valid token change nothing.
        await expect(
          roomy.base,
          path,
          method,
          { ...bearer(tokens.all), 'content-type': 'application/json' },
          405,
        );
      }
    }
  });

  test('the reverse: each status and header documented for an operation was seen (but 500, 503)', () => {
    const missing: string[] = [];
    const operations: [string, Record<string, Node>][] = [
      ...ENDPOINTS.flatMap(({ method, path }) =>
        [method, 'options'].map(
          (m) => [`${m} ${path}`, operation(path, m).responses] as [string, Record<string, Node>],
        ),
      ),
      ...(['preflight', 'other'] as const).map(
        (key) =>
          [`${OTHER_METHODS} ${key}`, document[OTHER_METHODS][key].responses ?? {}] as [
            string,
            Record<string, Node>,
          ],
      ),
    ];
    for (const [name, responses] of operations) {
      for (const [status, response] of Object.entries(responses)) {
        if (UNPROVOKED[status]) continue;
        const headers = seen.get(name)?.get(status);
        if (!headers) {
          missing.push(`${name} ${status}`);
          continue;
        }
        for (const header of Object.keys((resolved(response).headers ?? {}) as Node)) {
          if (!headers.has(header.toLowerCase())) missing.push(`${name} ${status} ${header}`);
        }
      }
    }
    assert.deepEqual(missing, []);
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
  const notAllowed = { error: 'method_not_allowed', error_description: 'Read-only.' };

  test('an answer as documented passes', async () => {
    await checkAgainstOpenApi(exchange('/api/v1/me', 200, ok, { data: me }));
    await checkAgainstOpenApi(
      exchange('/api/v1/nowhere', 404, {}, { error: 'not_found', error_description: 'No.' }),
    );
    const refused = { 'x-request-id': 'r1', allow: 'GET, HEAD, OPTIONS', vary: 'Origin' };
    await checkAgainstOpenApi({ ...exchange('/api/v1/me', 405, refused, notAllowed), method: 'PROPFIND' });
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
      exchange('/api/v1/me', 200, { ...ok, 'x-powered-by': 'Express' }, { data: me }),
      { ...exchange('/api/v1/me', 405, { 'x-request-id': 'r1' }, notAllowed), method: 'POST' },
      {
        ...exchange('/api/v1/me', 405, { 'x-request-id': 'r1', allow: 'GET, HEAD, POST' }, notAllowed),
        method: 'POST',
      },
      {
        ...exchange('/api/v1/me', 405, { 'x-request-id': 'r1', allow: 'GET, HEAD, OPTIONS' }, notAllowed),
        method: 'BREW',
      },
      {
        ...exchange('/api/v1/me', 200, { 'x-request-id': 'r1', allow: 'GET, HEAD, OPTIONS' }, undefined),
        method: 'OPTIONS',
      },
    ];
    for (const answer of wrong) {
      await assert.rejects(checkAgainstOpenApi(answer), OpenApiMismatch, `${answer.url} ${answer.status}`);
    }
  });
});
