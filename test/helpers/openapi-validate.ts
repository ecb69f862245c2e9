// Checks one HTTP answer against the OpenAPI document the server itself serves, so that every answer the
// black-box suites see is one the document promises: the path and method are documented, the status is
// documented for that operation, every header marked required is there and matches its schema, no header
// of the API goes undocumented, and a JSON body matches the schema of its media type. Paths outside /api/v1
// are not checked; non-JSON bodies (PGN) only as far as their status, headers and media type go.
//
// GET, HEAD and OPTIONS are operations; the write methods and the CORS preflight have none (see
// src/api/openapi/methods.ts): their answers are checked against the document's x-other-methods extension
// in the same way. A path the document does not
// have must be 404 in the Error shape.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const OTHER_METHODS = 'x-other-methods';
const API_PREFIX = '/api/v1/';
// Headers no answer's description names: HTTP's own framing (the media type is checked against content),
// and CORS, which every API answer carries alike (x-other-methods' description says so; the preflight's
// own headers are documented there).
const UNDESCRIBED =
  /^(?:content-type|content-length|content-encoding|transfer-encoding|date|connection|keep-alive|access-control-.*)$/;
// The document's own $id inside Ajv: its internal "#/components/..." references resolve against it.
const DOCUMENT_ID = 'https://chessport.invalid/openapi.json';

export interface Exchange {
  url: string;
  method: string;
  status: number;
  headers: Headers;
  text: string;
}

type Node = { [key: string]: unknown };

interface Contract {
  document: Node;
  paths: { template: string; pattern: RegExp }[];
  validator(pointer: string): ValidateFunction;
}

const contracts = new Map<string, Promise<Contract>>();

export class OpenApiMismatch extends Error {
  override name = 'OpenApiMismatch';
}

/** Throws OpenApiMismatch when the answer is not one the server's OpenAPI document describes. */
export async function checkAgainstOpenApi(exchange: Exchange): Promise<void> {
  const url = new URL(exchange.url);
  if (!url.pathname.startsWith(API_PREFIX) || url.pathname === OPENAPI_PATH) return;
  const contract = await contractFor(url.origin);
  const fail = (detail: string): never => {
    throw new OpenApiMismatch(
      `${exchange.method.toUpperCase()} ${url.pathname}${url.search} answered ${exchange.status}: ${detail}`,
    );
  };
  const found = documentedAnswer(contract, exchange, fail);
  if (!found) return checkErrorBody(contract, exchange, fail);
  const { response, pointer: responsePointer } = found;

  checkHeaders(contract, exchange, response, responsePointer, fail);

  const content = response.content as Node | undefined;
  if (exchange.method.toUpperCase() === 'HEAD' || exchange.status === 304 || content === undefined) {
    if (exchange.text !== '') fail('a body came where the document describes none');
    return;
  }
  const mediaType = (exchange.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (content[mediaType] === undefined) {
    fail(`content-type "${mediaType}" is not documented (documented: ${Object.keys(content).join(', ')})`);
  }
  const schemaPointer = pointerOf([...responsePointer, 'content', mediaType, 'schema']);
  // NDJSON: its schema is each line's, every line ended by a newline.
  if (mediaType === 'application/x-ndjson') {
    if (exchange.text !== '' && !exchange.text.endsWith('\n')) fail('the last NDJSON line has no newline');
    for (const line of exchange.text.split('\n').slice(0, -1)) checkJson(contract, line, schemaPointer, fail);
    return;
  }
  if (!mediaType.endsWith('json')) return;
  checkJson(contract, exchange.text, pointerOf([...responsePointer, 'content', mediaType, 'schema']), fail);
}

interface Documented {
  /** `get /api/v1/games/{id}`, or `x-other-methods options` and the like for a method without one. */
  operation: string;
  /** The documented status it falls under: `404`, or `4XX` or `default` were there such entries. */
  status: string;
  response: Node;
  /** Where `response` is, after following any $ref (components/responses/...). */
  pointer: string[];
}

/**
 * The operation and response the document gives for this answer, with the headers that response documents
 * (lower-case name -> name as documented, and whether it is required). Undefined for a path the document
 * does not have. Throws OpenApiMismatch when the status is not documented there.
 */
export async function documentedFor(
  exchange: Exchange,
): Promise<
  (Omit<Documented, 'response' | 'pointer'> & { headers: Map<string, DocumentedHeader> }) | undefined
> {
  const contract = await contractFor(new URL(exchange.url).origin);
  const fail = (detail: string): never => {
    throw new OpenApiMismatch(`${exchange.method} ${exchange.url} answered ${exchange.status}: ${detail}`);
  };
  const found = documentedAnswer(contract, exchange, fail);
  if (!found) return undefined;
  const headers = new Map<string, DocumentedHeader>();
  for (const name of Object.keys((found.response.headers ?? {}) as Node)) {
    const [header] = resolve(contract.document, [...found.pointer, 'headers', name]);
    headers.set(name.toLowerCase(), { name, required: header.required === true });
  }
  return { operation: found.operation, status: found.status, headers };
}

export interface DocumentedHeader {
  name: string;
  required: boolean;
}

/** The response the document gives for this answer, or undefined for a path it does not have. */
function documentedAnswer(
  contract: Contract,
  exchange: Exchange,
  fail: (detail: string) => never,
): Documented | undefined {
  const url = new URL(exchange.url);
  const method = exchange.method.toLowerCase();
  const path = contract.paths.find(({ pattern }) => pattern.test(url.pathname));
  if (!path) {
    if (exchange.status !== 404) fail('the path is not in the OpenAPI document, so only 404 is expected');
    return undefined;
  }
  const item = at(contract.document, ['paths', path.template]) as Node;
  const operationMethod = method === 'head' && item.head === undefined ? 'get' : method;
  let operation = `${operationMethod} ${path.template}`;
  let responsesPointer = ['paths', path.template, operationMethod, 'responses'];
  if (item[operationMethod] === undefined || isPreflightAnswer(exchange)) {
    const key = otherMethodKey(contract, exchange, fail);
    operation = `${OTHER_METHODS} ${key}`;
    responsesPointer = [OTHER_METHODS, key, 'responses'];
  }
  const responses = (at(contract.document, responsesPointer) ?? {}) as Node;
  const code = String(exchange.status);
  const status = [code, `${code[0]}XX`, 'default'].find((candidate) => responses[candidate] !== undefined);
  if (status === undefined) {
    return fail(
      `the status is not documented for ${operation} (documented: ${Object.keys(responses).join(', ')})`,
    );
  }
  const [response, pointer] = resolve(contract.document, [...responsesPointer, status]);
  return { operation, status, response, pointer };
}

/**
 * An OPTIONS answer is taken for a CORS preflight's when it carries Access-Control-Allow-Methods (the answer,
 * not the request, is at hand here): the CORS handling gives it, before the path's OPTIONS operation.
 */
function isPreflightAnswer(exchange: Exchange): boolean {
  return exchange.method.toUpperCase() === 'OPTIONS' && exchange.headers.has('access-control-allow-methods');
}

/** The x-other-methods entry of a method without an operation, or of a CORS preflight. */
function otherMethodKey(contract: Contract, exchange: Exchange, fail: (detail: string) => never): string {
  const method = exchange.method.toUpperCase();
  if (method === 'OPTIONS') {
    if (isPreflightAnswer(exchange)) return 'preflight';
    fail('OPTIONS has no operation on this path');
  }
  const methods = at(contract.document, [OTHER_METHODS, 'other', 'methods']);
  if (!Array.isArray(methods) || !methods.includes(method)) {
    fail(`the method has no operation and is not among ${OTHER_METHODS}.other.methods`);
  }
  return 'other';
}

function checkHeaders(
  contract: Contract,
  exchange: Exchange,
  response: Node,
  responsePointer: string[],
  fail: (detail: string) => never,
): void {
  const documented = Object.keys((response.headers ?? {}) as Node);
  const names = new Set(documented.map((name) => name.toLowerCase()));
  for (const [name] of exchange.headers) {
    if (!names.has(name) && !UNDESCRIBED.test(name)) fail(`header ${name} is not documented for this answer`);
  }
  for (const name of documented) {
    const [header, headerPointer] = resolve(contract.document, [...responsePointer, 'headers', name]);
    const value = exchange.headers.get(name);
    if (value === null) {
      if (header.required === true) fail(`the required header ${name} is missing`);
      continue;
    }
    const schema = header.schema as Node | undefined;
    if (!schema) continue;
    // Header values are text; a header documented as an integer must be one written in digits.
    const typed = schema.type === 'integer' && /^-?[0-9]+$/.test(value) ? Number(value) : value;
    const validate = contract.validator(pointerOf([...headerPointer, 'schema']));
    if (!validate(typed)) fail(`header ${name}: ${JSON.stringify(value)} ${describe(validate)}`);
  }
}

function checkJson(contract: Contract, text: string, pointer: string, fail: (detail: string) => never): void {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    fail(`the body is not JSON: ${text.slice(0, 200)}`);
  }
  const validate = contract.validator(pointer);
  if (!validate(body)) fail(`the body does not match ${pointer}: ${describe(validate)}`);
}

function checkErrorBody(contract: Contract, exchange: Exchange, fail: (detail: string) => never): void {
  if (exchange.method.toUpperCase() === 'HEAD') return;
  const type = exchange.headers.get('content-type') ?? '';
  if (!type.startsWith('application/json')) fail(`an error answer must be JSON, got "${type}"`);
  checkJson(contract, exchange.text, '#/components/schemas/ErrorBody', fail);
}

function describe(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .slice(0, 5)
    .map((error) => `${error.instancePath || '(root)'} ${error.message ?? ''}`)
    .join('; ');
}

function contractFor(origin: string): Promise<Contract> {
  let contract = contracts.get(origin);
  if (!contract) {
    contract = loadContract(origin);
    contracts.set(origin, contract);
    // A failed fetch is not remembered: the next answer from that origin tries again.
    contract.catch(() => contracts.delete(origin));
  }
  return contract;
}

async function loadContract(origin: string): Promise<Contract> {
  const response = await fetch(`${origin}${OPENAPI_PATH}`);
  if (response.status !== 200) {
    throw new OpenApiMismatch(`${origin}${OPENAPI_PATH} answered ${response.status}, not the document`);
  }
  const document = (await response.json()) as Node;
  // OpenAPI 3.1 schemas are JSON Schema 2020-12. The whole document is registered as one schema resource so
  // that its "#/components/..." references resolve; strict mode would refuse its non-schema keys (paths...).
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  const validators = new Map<string, ValidateFunction>();
  const paths = Object.keys((document.paths ?? {}) as Node)
    .map((template) => ({ template, pattern: templatePattern(template) }))
    // A literal segment wins over a parameter (/games/feed before /games/{id}, were there such a path).
    .sort((a, b) => braces(a.template) - braces(b.template));
  return {
    document,
    paths,
    validator(pointer) {
      const known = validators.get(pointer);
      if (known) return known;
      const validate = ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      validators.set(pointer, validate);
      return validate;
    },
  };
}

const braces = (template: string) => template.split('{').length - 1;

function templatePattern(template: string): RegExp {
  const parts = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^/]+')}$`);
}

function at(document: Node, pointer: string[]): unknown {
  let node: unknown = document;
  for (const part of pointer) node = (node as Node | undefined)?.[part];
  return node;
}

/** The node at the pointer, following a local $ref (components/responses, components/headers). */
function resolve(document: Node, pointer: string[]): [Node, string[]] {
  const node = at(document, pointer) as Node;
  const ref = node.$ref;
  if (typeof ref !== 'string') return [node, pointer];
  const target = ref
    .replace(/^#\//, '')
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  return resolve(document, target);
}

function pointerOf(parts: string[]): string {
  return `#/${parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
}
