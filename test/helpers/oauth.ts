// OAuth test helpers: users with passwords and apps registered as clients through the CLI, the example app
// (examples/oauth-app) as a child process, and a small browser over fetch (a cookie jar, forms) that walks an
// authorization request through the server's own pages, for the tests that need many codes and no Chromium.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseSetCookie } from 'cookie';
import { BIN, type CliResult, cliJson, type Env, importPgn, ROOT, tempEnv } from './harness.ts';
import { ALICE_PGN } from './world.ts';

export const PASSWORD = 'correct horse battery staple';

/** Runs `chessport <args>` with `input` on its standard input. */
export function cliWithInput(env: Env, args: string[], input: string): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: env.env, cwd: env.dir });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** A user who can sign in: `users add`, then `users passwd --stdin`, both in this process (seeding). */
export async function addUserWithPassword(env: Env, login: string, password = PASSWORD): Promise<void> {
  await cliJson(env, ['users', 'add', login, '--name', `${login} Example`]);
  const { cliInProcess } = await import('./cli-in-process.ts'); // as cliJson's
  const set = await cliInProcess(env, ['users', 'passwd', login, '--stdin'], { stdin: `${password}\n` });
  if (set.code !== 0) throw new Error(`users passwd failed: ${set.stderr}`);
}

export interface Client {
  clientId: string;
  clientSecret: string | null;
}

/** `chessport apps add <name> ... --json`: the client id and a confidential client's secret. */
export async function addClient(env: Env, name: string, args: string[]): Promise<Client> {
  return cliJson<Client>(env, ['apps', 'add', name, ...args]);
}

/**
 * The store both `sync --login` suites start from: users ann and bob who can sign in, ann's games in her
 * database "main", and the device-flow client "chessport sync" (public); no CHESSPORT_TOKEN in the
 * environment, since the sync finds its token through --login or the folder, never from the tests' own.
 */
export async function syncLoginEnv(): Promise<{ env: Env; clientId: string }> {
  const env = tempEnv();
  delete env.env.CHESSPORT_TOKEN;
  await addUserWithPassword(env, 'ann');
  await addUserWithPassword(env, 'bob');
  await importPgn(env, ALICE_PGN, 'ann', 'main');
  const { clientId } = await addClient(env, 'chessport sync', ['--device', '--public']);
  return { env, clientId };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface ExampleApp {
  base: string;
  stop(): Promise<void>;
}

/** Starts examples/oauth-app on `port` against the chessport at `issuer`. */
export async function startExampleApp(issuer: string, client: Client, port: number): Promise<ExampleApp> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CHESSPORT_URL: issuer,
    CLIENT_ID: client.clientId,
    PORT: String(port),
  };
  if (client.clientSecret) env.CLIENT_SECRET = client.clientSecret;
  const child = spawn(process.execPath, [join(ROOT, 'examples/oauth-app/app.ts')], { env });
  let output = '';
  const base = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening at (http:\/\/[0-9.:]+)/.exec(output);
      if (m?.[1]) resolve(m[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the example app exited (${code}):\n${output}`)));
    setTimeout(() => reject(new Error(`the example app did not start:\n${output}`)), 20_000).unref();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    base,
    stop: async () => {
      if (child.exitCode === null) child.kill();
      await exited;
    },
  };
}

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** What a page of the server answered, with its body. */
export interface Page {
  status: number;
  headers: Headers;
  text: string;
  url: string;
}

/** A browser without script: a cookie jar, redirects followed by hand (so each hop can be seen), forms. */
export class FormBrowser {
  private readonly jar = new Map<string, string>();
  /** Headers sent with every request: X-Forwarded-For, to stand at another address behind TRUST_PROXY. */
  readonly extraHeaders: Record<string, string>;
  /** The hops of the last request that followed redirects. */
  hops: string[] = [];

  constructor(extraHeaders: Record<string, string> = {}) {
    this.extraHeaders = extraHeaders;
  }

  private keep(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const { name, value, maxAge } = parseSetCookie(line);
      if (value === undefined || value === '' || maxAge === 0) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  cookie(name: string): string | undefined {
    return this.jar.get(name);
  }

  forget(name: string): void {
    this.jar.delete(name);
  }

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Page> {
    const headers: Record<string, string> = { ...this.extraHeaders };
    if (this.jar.size > 0) headers.cookie = [...this.jar].map(([n, v]) => `${n}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await fetch(url, {
      method: init.method ?? (body ? 'POST' : 'GET'),
      headers,
      body,
      redirect: 'manual',
    });
    this.keep(response.headers);
    return { status: response.status, headers: response.headers, text: await response.text(), url };
  }

  /**
   * Follows redirects on `origin` from `url` until an answer that is not one, or one that leaves the origin
   * (the app's redirect URI): returns that answer, and the URL it sends to when it is a redirect.
   */
  async follow(
    url: string,
    origin: string,
    init: { form?: Record<string, string> } = {},
  ): Promise<{ page: Page; location: string | null }> {
    this.hops = [url];
    let page = await this.request(url, init);
    for (let i = 0; i < 10; i++) {
      const location = page.headers.get('location');
      if (page.status < 300 || page.status >= 400 || !location) return { page, location: null };
      const next = new URL(location, page.url).href;
      this.hops.push(next);
      if (new URL(next).origin !== origin) return { page, location: next };
      page = await this.request(next);
    }
    throw new Error(`too many redirects: ${this.hops.join(' -> ')}`);
  }
}

/** The value of a form's hidden field on a page. */
export function field(text: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(text);
  if (!m?.[1]) throw new Error(`no field ${name} on the page:\n${text}`);
  return m[1];
}

/** The action of the page's first form whose action contains `part`. */
export function action(text: string, part: string): string {
  const m = new RegExp(`<form method="post" action="([^"]*${part}[^"]*)"`).exec(text);
  if (!m?.[1]) throw new Error(`no form posting to ${part} on the page:\n${text}`);
  return m[1].replaceAll('&amp;', '&');
}

export interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  scope: string;
  state?: string;
  pkce?: Pkce;
  extra?: Record<string, string>;
}

export function authorizeUrl(base: string, request: AuthorizeRequest): string {
  const params = new URLSearchParams({
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    response_type: 'code',
    scope: request.scope,
    state: request.state ?? randomBytes(8).toString('hex'),
    ...(request.pkce && { code_challenge: request.pkce.challenge, code_challenge_method: 'S256' }),
    ...request.extra,
  });
  return `${base}/oauth/authorize?${params}`;
}

/** Where signInAndConsent stopped: at a redirect, at another page of the server, or still at a form. */
interface Walked {
  page: Page;
  location: string | null;
  /** The page is neither the sign-in form nor the consent form. */
  otherPage: boolean;
}

/**
 * Answers the server's sign-in form (as `login`) and consent form (with `decision`) from `start` on, up to 4
 * pages, until the server redirects or shows a page that is neither.
 */
async function signInAndConsent(
  browser: FormBrowser,
  base: string,
  start: { page: Page; location: string | null },
  login: string,
  decision: 'allow' | 'deny',
): Promise<Walked> {
  let { page, location } = start;
  for (let step = 0; step < 4 && location === null; step++) {
    if (page.text.includes('name="password"')) {
      ({ page, location } = await browser.follow(new URL(action(page.text, '/login'), base).href, base, {
        form: { csrf: field(page.text, 'csrf'), login, password: PASSWORD },
      }));
    } else if (page.text.includes('name="decision"')) {
      ({ page, location } = await browser.follow(new URL(action(page.text, '/consent'), base).href, base, {
        form: { csrf: field(page.text, 'csrf'), decision },
      }));
    } else {
      return { page, location, otherPage: true };
    }
  }
  return { page, location, otherPage: false };
}

/**
 * Walks an authorization request through sign-in (when the browser is not signed in) and consent, answering
 * `decision`; returns where the server finally sends the browser (the app's redirect URI with its
 * parameters).
 */
export async function authorize(
  browser: FormBrowser,
  base: string,
  request: AuthorizeRequest,
  login = 'ann',
  decision: 'allow' | 'deny' = 'allow',
): Promise<URL> {
  const start = await browser.follow(authorizeUrl(base, request), base);
  const { page, location, otherPage } = await signInAndConsent(browser, base, start, login, decision);
  if (otherPage) throw new Error(`unexpected page (${page.status}) at ${browser.hops.at(-1)}:\n${page.text}`);
  if (location === null) throw new Error(`no redirect to the app: ${browser.hops.join(' -> ')}`);
  return new URL(location);
}

/**
 * Enters a device's user code on /oauth/device as a user would (the code, the confirmation, sign-in when the
 * browser is not signed in, consent answered with `decision`) and returns the last page: "Device connected"
 * when allowed.
 */
export async function enterDeviceCode(
  browser: FormBrowser,
  base: string,
  userCode: string,
  login = 'ann',
  decision: 'allow' | 'deny' = 'allow',
): Promise<Page> {
  const entry = await browser.follow(`${base}/oauth/device`, base);
  const code = await browser.follow(`${base}/oauth/device`, base, {
    form: { xsrf: field(entry.page.text, 'xsrf'), user_code: userCode },
  });
  const confirmed = await browser.follow(`${base}/oauth/device`, base, {
    form: {
      xsrf: field(code.page.text, 'xsrf'),
      user_code: field(code.page.text, 'user_code'),
      confirm: 'yes',
    },
  });
  const { page, otherPage } = await signInAndConsent(browser, base, confirmed, login, decision);
  if (otherPage) return page;
  throw new Error(`the device flow did not end on a page of the server: ${browser.hops.join(' -> ')}`);
}

/** A form POST to the token endpoint (or another), with HTTP Basic client authentication when given. */
export async function tokenRequest(
  base: string,
  params: Record<string, string>,
  auth?: { clientId: string; clientSecret: string },
  path = '/oauth/token',
): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (auth) {
    const basic = `${encodeURIComponent(auth.clientId)}:${encodeURIComponent(auth.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
  }
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers,
    body: new URLSearchParams(params),
  });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}
