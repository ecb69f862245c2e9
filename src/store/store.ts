// The one interface to the data: every query of the service, scoped by owner, on either dialect. The Store
// opens (connect.ts) and closes, runs the write transactions (write, transaction: the context's), and holds
// one object per resource, each owning its queries: `store.accounts`, `store.tokens`, `store.databases`,
// `store.games`, `store.feed`, `store.oauth` and `store.webhooks` (docs/architecture.md, "The store").
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { Accounts } from './accounts.ts';
import type { DialectSettings } from './adapter.ts';
import type { ChangeSignals } from './change-signals.ts';
import type { StoreContext } from './context.ts';
import { Databases } from './databases.ts';
import { DeveloperApps } from './developer-apps.ts';
import { Feed } from './feed.ts';
import { Games } from './game-writes.ts';
import { Grants } from './grants.ts';
import { Hearing } from './hearing.ts';
import { OAuthRecords } from './oauth-records.ts';
import { PersonalTokens } from './personal-tokens.ts';
import type { ReadRouting, ReplicaSettings } from './read-routing.ts';
import type { DB } from './schema.ts';
import { Tokens } from './tokens.ts';
import { WebhookDeliveries } from './webhook-deliveries.ts';
import { WebhookEndpoints } from './webhook-endpoints.ts';
import { WebhookEvents } from './webhook-events.ts';
import { WebhookOutbox } from './webhook-outbox.ts';

export class Store {
  /** The connection, for the store's own modules and tests: everything else asks the resources. */
  readonly db: Kysely<DB>;
  /** The dialect's name and the settings only it knows how to make (adapter.ts). */
  readonly dialect: DialectSettings;
  /** The change-signal bus (StoreContext.signals). */
  readonly signals: ChangeSignals;
  /** StoreContext.write: a write transaction on one owner's data, which every write to games runs in. */
  readonly write: StoreContext['write'];
  /** StoreContext.transaction: a write transaction that touches no game. */
  readonly transaction: StoreContext['transaction'];
  /** Where the API's reads run, how many ran where, and the replicas' state (read-routing.ts). */
  readonly reads: ReadRouting;
  private readonly ctx: StoreContext;

  /** The server secret, users and apps (accounts.ts). */
  readonly accounts: Accounts;
  /** Access tokens (tokens.ts). */
  readonly tokens: Tokens;
  /** Databases, and their deletion with their games (databases.ts). */
  readonly databases: Databases;
  /** Games: the reads (games.ts) and the writes (game-writes.ts). */
  readonly games: Games;
  /** The feed of an owner's changes (feed.ts). */
  readonly feed: Feed;
  /** What the OAuth authorization server keeps: grants (grants.ts) and its other records (oauth-records.ts). */
  readonly oauth: { readonly grants: Grants; readonly records: OAuthRecords };
  /**
   * What the webhooks keep: endpoints (webhook-endpoints.ts), the outbox's fan-out (webhook-outbox.ts),
   * deliveries (webhook-deliveries.ts), the events besides changes (webhook-events.ts: `ping`,
   * `grant.revoked`), and which apps may hear of a user (hearing.ts).
   */
  readonly webhooks: {
    readonly endpoints: WebhookEndpoints;
    readonly outbox: WebhookOutbox;
    readonly deliveries: WebhookDeliveries;
    readonly events: WebhookEvents;
    readonly hearing: Hearing;
  };

  /** What a developer owns on /developers: apps, their endpoints and deliveries (developer-apps.ts). */
  readonly developers: DeveloperApps;
  /** The users' personal access tokens (personal-tokens.ts). */
  readonly personalTokens: PersonalTokens;

  /**
   * The migrations that opening this store applied, in order: every one for a new store (0001_initial
   * first), the newer ones for a store that an older version made, none for a store already up to date.
   */
  readonly migrationsApplied: readonly string[];

  constructor(ctx: StoreContext, migrationsApplied: readonly string[] = []) {
    this.db = ctx.db;
    this.dialect = ctx.adapter;
    this.signals = ctx.signals;
    this.write = ctx.write;
    this.transaction = ctx.transaction;
    this.reads = ctx.reads;
    this.ctx = ctx;
    this.accounts = new Accounts(ctx);
    this.tokens = new Tokens(ctx);
    this.databases = new Databases(ctx);
    this.games = new Games(ctx, this.databases);
    this.feed = new Feed(ctx);
    this.oauth = { grants: new Grants(ctx), records: new OAuthRecords(ctx) };
    const hearing = new Hearing(ctx);
    const deliveries = new WebhookDeliveries(ctx);
    this.webhooks = {
      endpoints: new WebhookEndpoints(ctx),
      outbox: new WebhookOutbox(ctx, hearing),
      deliveries,
      events: new WebhookEvents(ctx, deliveries),
      hearing,
    };
    this.developers = new DeveloperApps(ctx, this.webhooks.endpoints, this.webhooks.deliveries);
    this.personalTokens = new PersonalTokens(ctx, this.tokens);
    this.migrationsApplied = migrationsApplied;
  }

  /** A cheap query that fails when the store is unreachable. */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  /**
   * From now on the API's reads go to these streaming replicas where they can (docs/operations.md,
   * "Replicas"); resolves once each has been checked. Refused on SQLite.
   */
  async useReplicas(settings: ReplicaSettings): Promise<void> {
    const replicas = await this.ctx.adapter.openReplicas(this.db, settings);
    // None named (REPLICA_MAX_LAG alone): the primary reads all, and no read counts as a fallback.
    if (settings.urls.length > 0) this.reads.use(replicas);
    else await replicas.close();
  }

  async close(): Promise<void> {
    await this.reads.close();
    await this.signals.close();
    await this.db.destroy();
  }
}
