// What the server's own pages know of a browser: the signed-in user (a session cookie naming a record in the
// store, kept as its SHA-256 like every credential) and a CSRF token for every form (a signed double-submit
// cookie: the form carries an HMAC of a random cookie value under a key of the server secret, so a page on
// another site can neither read the token nor make one, nor plant a cookie that matches one).
// Cookies are HttpOnly and SameSite=Lax; over https also Secure, with the __Host- prefix (no Domain, Path=/).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { parseCookie, type SetCookie, stringifySetCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store, User } from '../store/index.ts';

/** How long a sign-in lasts. */
export const SIGN_IN_TTL_S = 12 * 3600;

const SESSION_MODEL = 'WebSession';

export class Browsers {
  readonly sessionCookie: string;
  private readonly csrfCookie: string;
  private readonly store: Store;
  private readonly secure: boolean;
  private readonly key: Buffer;

  constructor(store: Store, secure: boolean, key: Buffer) {
    this.store = store;
    this.secure = secure;
    this.key = key;
    const prefix = secure ? '__Host-' : '';
    this.sessionCookie = `${prefix}chessport_session`;
    this.csrfCookie = `${prefix}chessport_csrf`;
  }

  private cookie(request: FastifyRequest, name: string): string | undefined {
    const header = request.headers.cookie;
    return header === undefined ? undefined : parseCookie(header)[name];
  }

  private setCookie(reply: FastifyReply, cookie: SetCookie): void {
    const line = stringifySetCookie({
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: this.secure,
      ...cookie,
    });
    const previous = reply.getHeader('set-cookie');
    const lines = previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)];
    reply.header('set-cookie', [...lines, line]);
  }

  /** The user signed in with this session cookie value, if it is one. */
  async userOf(sessionId: string | undefined): Promise<User | undefined> {
    if (!sessionId || sessionId.length > 100) return undefined;
    const record = await this.store.oauth.records.find(SESSION_MODEL, 'id', sessionId);
    if (!record) return undefined;
    const { userId } = JSON.parse(record.payload) as { userId: string };
    return this.store.accounts.getUserById(userId);
  }

  /** The user this browser is signed in as. */
  async signedIn(request: FastifyRequest): Promise<User | undefined> {
    return this.userOf(this.cookie(request, this.sessionCookie));
  }

  /** Signs the browser in (a new session, whatever it had before). */
  async signIn(reply: FastifyReply, user: User): Promise<void> {
    const id = randomBytes(32).toString('base64url');
    await this.store.oauth.records.save(SESSION_MODEL, id, {
      payload: JSON.stringify({ userId: user.id }),
      grantId: null,
      uid: null,
      userCode: null,
      userId: user.id,
      expiresAt: Date.now() + SIGN_IN_TTL_S * 1000,
    });
    this.setCookie(reply, { name: this.sessionCookie, value: id, maxAge: SIGN_IN_TTL_S });
  }

  async signOut(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const id = this.cookie(request, this.sessionCookie);
    if (id && id.length <= 100) await this.store.oauth.records.delete(SESSION_MODEL, id);
    this.setCookie(reply, { name: this.sessionCookie, value: '', maxAge: 0 });
  }

  private mac(value: string): string {
    return createHmac('sha256', this.key).update(`csrf\0${value}`).digest('base64url');
  }

  /** The token for the forms of this page; gives the browser its CSRF cookie first when it has none. */
  csrfToken(request: FastifyRequest, reply: FastifyReply): string {
    let value = this.cookie(request, this.csrfCookie);
    if (!value || !/^[A-Za-z0-9_-]{43}$/.test(value)) {
      value = randomBytes(32).toString('base64url');
      this.setCookie(reply, { name: this.csrfCookie, value });
    }
    return this.mac(value);
  }

  /** Whether a form came with the token of this browser's CSRF cookie. */
  csrfValid(request: FastifyRequest, token: string | undefined): boolean {
    const value = this.cookie(request, this.csrfCookie);
    if (!value || !token) return false;
    const want = Buffer.from(this.mac(value));
    const got = Buffer.from(token);
    return want.length === got.length && timingSafeEqual(want, got);
  }
}
