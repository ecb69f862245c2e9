// `chessport webhooks ...` (docs/cli.md, docs/webhooks.md): the operator's endpoints per app, their secrets,
// and their deliveries.
import type { Command } from 'commander';
import { iso } from '../../api/serialize.ts';
import { checkEndpointUrl, RefusedAddress, resolvePublic } from '../../platform/webhook-address.ts';
import {
  type Store,
  SUBSCRIBABLE_EVENTS,
  type SubscribableEvent,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '../../store/index.ts';
import { jsonOption, requireApp, requireUser, withStore } from '../context.ts';
import { CliError } from '../errors.ts';
import { counted, emit, emitTable } from '../output.ts';
import { parseName, parsePositiveInt, webhookAllowPrivate } from '../settings.ts';

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** The most deliveries `webhooks deliveries` lists. */
const MAX_LIST = 1000;

const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/**
 * `--events`: a comma-separated list of the event types to subscribe to, or `all` (every one, also those added
 * later: null).
 */
export function parseEvents(text: string): SubscribableEvent[] | null {
  const names = text.split(',').map((name) => name.trim());
  if (names.length === 1 && names[0] === 'all') return null;
  const known = SUBSCRIBABLE_EVENTS.join(', ');
  if (names.some((name) => name === '')) {
    throw new CliError(`--events is a comma-separated list of ${known}, or all; got "${text}"`);
  }
  for (const name of names) {
    if (name === 'ping') {
      throw new CliError(
        '--events cannot name ping: a ping goes to an endpoint when asked for (chessport webhooks ping), whatever it subscribes to',
      );
    }
    if (!(SUBSCRIBABLE_EVENTS as readonly string[]).includes(name)) {
      throw new CliError(`--events: unknown event "${name}"; the events are ${known} (or all)`);
    }
  }
  return SUBSCRIBABLE_EVENTS.filter((event) => names.includes(event));
}

/** What an endpoint subscribes to, in words. */
const eventsText = (events: readonly SubscribableEvent[] | null) =>
  events === null ? 'all' : events.join(',');

function endpointJson(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    app: endpoint.appName,
    url: endpoint.url,
    events: endpoint.events ?? 'all',
    state: endpoint.disabledAt === null ? 'enabled' : 'disabled',
    disabledAt: isoOrNull(endpoint.disabledAt),
    disabledReason: endpoint.disabledReason,
    failingSince: isoOrNull(endpoint.failingSince),
    previousSecretUntil: isoOrNull(endpoint.previousSecretUntil),
    createdAt: iso(endpoint.createdAt),
  };
}

function deliveryJson(delivery: WebhookDelivery) {
  return {
    id: delivery.id,
    messageId: delivery.messageId,
    endpoint: delivery.endpointId,
    app: delivery.appName,
    user: delivery.userLogin,
    event: delivery.eventType,
    state: delivery.state,
    changes: delivery.changes,
    attempts: delivery.attempts,
    lastStatus: delivery.lastStatus,
    lastError: delivery.lastError,
    lastLatencyMs: delivery.lastLatencyMs,
    createdAt: iso(delivery.createdAt),
    lastChangeAt: iso(delivery.lastChangeAt),
    nextAttemptAt: isoOrNull(delivery.dueAt),
    lastAttemptAt: isoOrNull(delivery.lastAttemptAt),
    finishedAt: isoOrNull(delivery.finishedAt),
  };
}

function endpointState(endpoint: WebhookEndpoint): string {
  if (endpoint.disabledAt !== null) return `disabled: ${endpoint.disabledReason ?? 'by the operator'}`;
  if (endpoint.failingSince !== null) return `enabled, failing since ${iso(endpoint.failingSince)}`;
  return 'enabled';
}

async function requireEndpoint(store: Store, id: string): Promise<WebhookEndpoint> {
  const endpoint = await store.webhooks.endpoints.find(id);
  if (!endpoint) throw new CliError(`no webhook endpoint "${id}" (chessport webhooks list shows them)`);
  return endpoint;
}

/** The URL, checked before anything is written: its form, and unless allowed, every address its host has. */
async function checkedUrl(text: string, allowPrivate: boolean): Promise<string> {
  parseName(text, '--url');
  try {
    const url = checkEndpointUrl(text, allowPrivate);
    if (!allowPrivate) await resolvePublic(url);
    return url.href;
  } catch (error) {
    if (error instanceof RefusedAddress) throw new CliError(`--url is refused: ${error.message}`);
    throw error;
  }
}

export function webhooksCommand(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description("manage the apps' webhook endpoints and see their deliveries");
  webhooks
    .command('add')
    .description('add an endpoint to an app; prints its id and signing secret (shown once)')
    .requiredOption('--app <name>', 'the app whose endpoint it is')
    .requiredOption('--url <url>', 'where deliveries are POSTed: https, at a public address')
    .option(
      '--events <list>',
      `the events it gets, comma-separated: ${SUBSCRIBABLE_EVENTS.join(', ')}; or all (the default)`,
    )
    .option(...jsonOption)
    .action(async (opts: { app: string; url: string; events?: string; json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const allowPrivate = webhookAllowPrivate();
        const events = opts.events === undefined ? null : parseEvents(opts.events);
        const app = await requireApp(store, opts.app);
        const url = await checkedUrl(opts.url, allowPrivate);
        const { endpoint, secret } = await store.webhooks.endpoints.add({ appId: app.id, url, events });
        emit(
          Boolean(opts.json),
          { id: endpoint.id, app: app.name, url: endpoint.url, secret },
          () =>
            `added endpoint ${endpoint.id} for ${app.name}: ${endpoint.url}\n` +
            `secret ${secret} (shown once: the receiver verifies every delivery with it)`,
        );
      }),
    );
  webhooks
    .command('list')
    .description('list endpoints (never their secrets)')
    .option('--app <name>', "only this app's")
    .option(...jsonOption)
    .action(async (opts: { app?: string; json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const app = opts.app === undefined ? undefined : await requireApp(store, opts.app);
        const all = await store.webhooks.endpoints.list(app?.id);
        emitTable(Boolean(opts.json), all.map(endpointJson), all, [
          ['ID', (e) => e.id],
          ['APP', (e) => e.appName],
          ['URL', (e) => e.url],
          ['EVENTS', (e) => eventsText(e.events)],
          ['STATE', endpointState],
        ]);
      }),
    );
  webhooks
    .command('update <id>')
    .description('change the events an endpoint gets')
    .requiredOption(
      '--events <list>',
      `comma-separated: ${SUBSCRIBABLE_EVENTS.join(', ')}; or all (also the events added later)`,
    )
    .option(...jsonOption)
    .action(async (id: string, opts: { events: string; json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const events = parseEvents(opts.events);
        const updated = await store.webhooks.endpoints.setEvents(id, events);
        if (!updated) throw new CliError(`no webhook endpoint "${id}" (chessport webhooks list shows them)`);
        emit(
          Boolean(opts.json),
          endpointJson(updated),
          () => `endpoint ${updated.id} gets ${events === null ? 'every event' : events.join(', ')}`,
        );
      }),
    );
  webhooks
    .command('ping <id>')
    .description("send an endpoint a signed test event (ping) now, carrying the user's pairwise id")
    .requiredOption('--user <login>', "the user whose pairwise id for the endpoint's app it carries")
    .option(...jsonOption)
    .action(async (id: string, opts: { user: string; json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const user = await requireUser(store, opts.user);
        const delivery = await store.webhooks.events.enqueuePing(id, user.id);
        if (!delivery) throw new CliError(`no webhook endpoint "${id}" (chessport webhooks list shows them)`);
        emit(
          Boolean(opts.json),
          deliveryJson(delivery),
          () => `ping ${delivery.id} to ${id} is due now (a running server sends it)`,
        );
      }),
    );
  webhooks
    .command('remove <id>')
    .description('remove an endpoint and its deliveries')
    .option(...jsonOption)
    .action(async (id: string, opts: { json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const removed = await store.webhooks.endpoints.remove(id);
        if (!removed) throw new CliError(`no webhook endpoint "${id}" (chessport webhooks list shows them)`);
        emit(
          Boolean(opts.json),
          endpointJson(removed),
          () => `removed endpoint ${removed.id} of ${removed.appName}: ${removed.url}`,
        );
      }),
    );
  webhooks
    .command('rotate-secret <id>')
    .description('give an endpoint a new signing secret; the old one also signs for 24 hours more')
    .option(...jsonOption)
    .action(async (id: string, opts: { json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const rotated = await store.webhooks.endpoints.rotateSecret(id, ROTATION_OVERLAP_MS);
        if (!rotated) throw new CliError(`no webhook endpoint "${id}" (chessport webhooks list shows them)`);
        const until = rotated.endpoint.previousSecretUntil as number;
        emit(
          Boolean(opts.json),
          { id: rotated.endpoint.id, secret: rotated.secret, previousSecretUntil: iso(until) },
          () =>
            `new secret ${rotated.secret} for ${rotated.endpoint.id} (shown once)\n` +
            `deliveries carry a signature with each secret until ${iso(until)}, then with the new one only`,
        );
      }),
    );
  for (const [name, disable] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    webhooks
      .command(`${name} <id>`)
      .description(
        disable
          ? 'stop delivering to an endpoint: its deliveries wait until it is enabled'
          : 'deliver to an endpoint again (what waited goes at once); its failures so far are forgotten',
      )
      .option(...jsonOption)
      .action(async (id: string, opts: { json?: boolean }, cmd: Command) =>
        withStore(cmd, async (store) => {
          const endpoint = await requireEndpoint(store, id);
          const already = (endpoint.disabledAt !== null) === disable;
          const changed = already
            ? endpoint
            : await store.webhooks.endpoints.setDisabled(
                id,
                disable ? { at: Date.now(), reason: 'disabled by the operator' } : null,
              );
          if (!changed)
            throw new CliError(`no webhook endpoint "${id}" (chessport webhooks list shows them)`);
          emit(Boolean(opts.json), endpointJson(changed), () =>
            already ? `endpoint ${id} is ${name}d already` : `${name}d endpoint ${id}`,
          );
        }),
      );
  }
  webhooks
    .command('deliveries [id]')
    .description("list the latest deliveries, newest first: all, or one endpoint's")
    .option('--failed', 'only those whose last attempt failed (retrying, or given up)')
    .option('--limit <n>', `how many, at most ${MAX_LIST} (default 50)`)
    .option(...jsonOption)
    .action(
      async (
        id: string | undefined,
        opts: { failed?: boolean; limit?: string; json?: boolean },
        cmd: Command,
      ) =>
        withStore(cmd, async (store) => {
          const limit = opts.limit === undefined ? 50 : parsePositiveInt(opts.limit, '--limit');
          if (limit > MAX_LIST) throw new CliError(`--limit is at most ${MAX_LIST}, got "${opts.limit}"`);
          if (id !== undefined) await requireEndpoint(store, id);
          const all = await store.webhooks.deliveries.list({
            endpointId: id,
            failed: Boolean(opts.failed),
            limit,
          });
          emitTable(Boolean(opts.json), all.map(deliveryJson), all, [
            ['ID', (d) => d.id],
            ['ENDPOINT', (d) => d.endpointId],
            ['USER', (d) => d.userLogin],
            ['EVENT', (d) => d.eventType],
            ['STATE', (d) => d.state],
            ['ATTEMPTS', (d) => String(d.attempts)],
            ['LAST', (d) => d.lastError ?? (d.lastStatus === null ? '' : `HTTP ${d.lastStatus}`)],
            ['NEXT', (d) => (d.dueAt === null ? '' : iso(d.dueAt))],
            ['CREATED', (d) => iso(d.createdAt)],
          ]);
        }),
    );
  webhooks
    .command('retry <delivery>')
    .description('attempt a delivery again now (a finished one under its message id, its retries afresh)')
    .option(...jsonOption)
    .action(async (id: string, opts: { json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const retried = await store.webhooks.deliveries.retry(id);
        if (!retried)
          throw new CliError(`no webhook delivery "${id}" (chessport webhooks deliveries shows them)`);
        emit(Boolean(opts.json), deliveryJson(retried), () =>
          retried.eventType === 'changes.available'
            ? `delivery ${id} is due now (${counted(retried.changes, 'change')}; a running server sends it)`
            : `delivery ${id} (${retried.eventType}) is due now (a running server sends it)`,
        );
      }),
    );
}
