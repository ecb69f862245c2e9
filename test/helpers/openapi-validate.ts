// Checks one HTTP answer against the OpenAPI document the server itself serves, so that every answer the
// black-box suites see is one the document promises: the path and method are documented, the status is
// documented for that operation, every header marked required is there and matches its schema, and a JSON
// body matches the schema of its media type. Paths outside /api/v1 are not checked; non-JSON bodies (PGN) only
// as far as their status, headers and media type go.
//
// The write methods and OPTIONS are described in the document's text, not as operations (they would double
// every path of the reference page): for those the check is the text's rule, 405 + Allow in the Error
// shape, or 204. A path the document does not have must be 404 in the Error shape.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export const OPENAPI_PATH = '/api/v1/openapi.json';
const API_PREFIX = '/api/v1/';
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
  const method = exchange.method.toLowerCase();
  const fail = (detail: string): never => {
    throw new OpenApiMismatch(
      `${exchange.method.toUpperCase()} ${url.pathname}${url.search} answered ${exchange.status}: ${detail}`,
    );
  };

  const path = contract.paths.find(({ pattern }) => pattern.test(url.pathname));
  if (!path) {
    if (exchange.status !== 404) fail('the path is not in the OpenAPI document, so only 404 is expected');
    return checkErrorBody(contract, exchange, fail);
  }
  const pathPointer = ['paths', path.template];
  const item = at(contract.document, pathPointer) as Node;
  const operationMethod = method === 'head' && item.head === undefined ? 'get' : method;
  if (item[operationMethod] === undefined) return checkUnlistedMethod(contract, exchange, fail);

  const responsesPointer = [...pathPointer, operationMethod, 'responses'];
  const responses = at(contract.document, responsesPointer) as Node;
  const status = String(exchange.status);
  const key = [status, `${status[0]}XX`, 'default'].find((candidate) => responses[candidate] !== undefined);
  if (key === undefined) {
    fail(
      `the status is not documented for ${path.template} (documented: ${Object.keys(responses).join(', ')})`,
    );
  }
  const [response, responsePointer] = resolve(contract.document, [...responsesPointer, key as string]);

  checkHeaders(contract, exchange, response, responsePointer, fail);

  const content = response.content as Node | undefined;
  if (method === 'head' || exchange.status === 304 || content === undefined) {
    if (exchange.text !== '') fail('a body came where the document describes none');
    return;
  }
  const mediaType = (exchange.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (content[mediaType] === undefined) {
    fail(`content-type "${mediaType}" is not documented (documented: ${Object.keys(content).join(', ')})`);
  }
  if (!mediaType.endsWith('json')) return;
  checkJson(contract, exchange.text, pointerOf([...responsePointer, 'content', mediaType, 'schema']), fail);
}

function checkHeaders(
  contract: Contract,
  exchange: Exchange,
  response: Node,
  responsePointer: string[],
  fail: (detail: string) => never,
): void {
  for (const name of Object.keys((response.headers ?? {}) as Node)) {
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
  checkJson(contract, exchange.text, '#/components/schemas/Error', fail);
}

/** The document's text: write methods are 405 with Allow in the Error shape, OPTIONS is 204. */
function checkUnlistedMethod(contract: Contract, exchange: Exchange, fail: (detail: string) => never): void {
  if (exchange.method.toUpperCase() === 'OPTIONS') {
    if (exchange.status !== 204) fail('OPTIONS is answered 204');
    return;
  }
  if (exchange.status !== 405) fail('a method the document does not list is 405 method_not_allowed');
  if (!exchange.headers.get('allow')) fail('a 405 carries Allow');
  checkErrorBody(contract, exchange, fail);
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
