// The developer console's webhook endpoints (docs/developer-console.md): added on an app's page (the SSRF rules
// of `chessport webhooks add`), each with a page of its own that disables and enables it, rotates its secret
// (the old one signs beside the new for 24 hours), removes it, sends it a test event (`ping`), and lists its
// latest deliveries (time, event, HTTP status, latency, error, attempt) with Redeliver. Only the developer's
// own endpoints and deliveries are found: another's id gives 404 and changes nothing.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkEndpointUrl, RefusedAddress, resolvePublic } from '../platform/webhook-address.ts';
import {
  StoreError,
  SUBSCRIBABLE_EVENTS,
  type SubscribableEvent,
  type User,
  type WebhookEndpoint,
} from '../store/index.ts';
import { consoleGate, consoleNav, csrfForm, DEVELOPERS_PATH, eventBoxes, notFound } from './developers.ts';
import { html, when } from './html.ts';
import { errorPage, type PagesContext, sendPage, strictForm } from './pages.ts';

/** How long a rotated-out endpoint secret keeps signing beside the new one (as `webhooks rotate-secret`). */
export const ENDPOINT_ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** The most endpoints one app has; the deliveries an endpoint's page lists. */
export const MAX_ENDPOINTS_PER_APP = 10;
const DELIVERIES_SHOWN = 50;

/**
 * The event types a form ticks (`events`, repeatable), or the message that refuses them: every one ticked (or
 * none, on the add form) is every event, also those added later (null).
 */
function subscription(
  form: URLSearchParams,
  noneIsAll: boolean,
): SubscribableEvent[] | null | { message: string } {
  const ticked = form.getAll('events');
  const unknown = ticked.find((t) => !(SUBSCRIBABLE_EVENTS as readonly string[]).includes(t));
  if (unknown !== undefined) return { message: `There is no event "${unknown}".` };
  if (new Set(ticked).size !== ticked.length) return { message: 'An event is ticked twice.' };
  if (ticked.length === 0 && !noneIsAll) return { message: 'Tick at least one event.' };
  if (ticked.length === 0 || ticked.length === SUBSCRIBABLE_EVENTS.length) return null;
  return ticked as SubscribableEvent[];
}

export function developerWebhookRoutes(scope: FastifyInstance, context: PagesContext): void {
  const { store } = context;
  const developerOf = consoleGate(context);

  async function endpointPage(
    request: FastifyRequest,
    reply: FastifyReply,
    user: User,
    endpoint: WebhookEndpoint,
    shown: { secret?: string; notice?: string; error?: string } = {},
    status = 200,
  ): Promise<FastifyReply> {
    const csrf = context.browsers.csrfToken(request, reply);
    const deliveries = await store.webhooks.deliveries.list({
      endpointId: endpoint.id,
      limit: DELIVERIES_SHOWN,
    });
    const base = `${DEVELOPERS_PATH}/webhooks/${endpoint.id}`;
    const enabled = endpoint.disabledAt === null;
    const button = (action: string, words: string, testid?: string) =>
      html`<form method="post" action="${base}/${action}" class="inline">
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit"${testid ? html` data-testid="${testid}"` : ''}>${words}</button>
</form>
`;
    const rows = deliveries.map(
      (d) => html`<tr>
<td>${when(d.lastAttemptAt ?? d.createdAt)}</td>
<td>${d.eventType}</td>
<td>${d.state}</td>
<td>${d.lastStatus === null ? '–' : String(d.lastStatus)}</td>
<td>${d.lastLatencyMs === null ? '–' : `${d.lastLatencyMs} ms`}</td>
<td>${d.lastError ?? ''}</td>
<td>${String(d.attempts)}</td>
<td><form method="post" action="${DEVELOPERS_PATH}/deliveries/${d.id}/redeliver">
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit" data-testid="redeliver" aria-label="Redeliver ${d.id}">Redeliver</button>
</form></td>
</tr>
`,
    );
    return sendPage(
      reply,
      status,
      'Webhook endpoint',
      html`${consoleNav(user)}
${shown.notice ? html`<p class="notice" role="status">${shown.notice}</p>` : ''}
${shown.error ? html`<p class="error" role="alert">${shown.error}</p>` : ''}
<dl>
<dt>App</dt>
<dd><a href="${DEVELOPERS_PATH}/apps/${endpoint.appId}">${endpoint.appName}</a></dd>
<dt>URL</dt>
<dd>${endpoint.url}</dd>
<dt>Endpoint id</dt>
<dd><code>${endpoint.id}</code></dd>
${
  shown.secret
    ? html`<dt>Signing secret</dt>
<dd><code class="secret" data-testid="webhook-secret">${shown.secret}</code></dd>
<dd><strong>Copy it now: it is shown this once.</strong> Your receiver verifies every delivery with it (Standard Webhooks).</dd>`
    : ''
}
<dt>Events</dt>
<dd>${endpoint.events === null ? 'every event (ping always)' : `${endpoint.events.join(', ')} (ping always)`}</dd>
<dt>State</dt>
<dd>${enabled ? (endpoint.failingSince === null ? 'enabled' : html`enabled, failing since ${when(endpoint.failingSince)}`) : `disabled: ${endpoint.disabledReason ?? 'disabled'}`}</dd>
${endpoint.previousSecretUntil !== null ? html`<dt>Previous secret</dt><dd>signs beside the new one until ${when(endpoint.previousSecretUntil)}</dd>` : ''}
</dl>
<div>${button('test', 'Send test event', 'send-test-event')}${button(enabled ? 'disable' : 'enable', enabled ? 'Disable' : 'Enable')}${button('rotate', 'Rotate the secret')}${button('remove', 'Remove the endpoint')}</div>
<p>A rotated-out secret signs beside the new one for 24 hours. Removing the endpoint removes its deliveries too.</p>
<form method="post" action="${base}/events">
<input type="hidden" name="csrf" value="${csrf}">
<fieldset>
<legend>Events it receives</legend>
${eventBoxes(endpoint.events, 'events')}</fieldset>
<p><button type="submit">Save the events</button></p>
</form>
<h2>Deliveries</h2>
${
  rows.length > 0
    ? html`<div class="wide"><table>
<caption>The latest ${String(DELIVERIES_SHOWN)} deliveries, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">State</th><th scope="col">HTTP status</th><th scope="col">Latency</th><th scope="col">Error</th><th scope="col">Attempt</th><th scope="col">Action</th></tr></thead>
<tbody>
${rows}</tbody>
</table></div>`
    : html`<p>No delivery yet.</p>`
}`,
    );
  }

  /** The developer and their endpoint of this request; undefined once the answer is sent. */
  async function owned(
    request: FastifyRequest,
    reply: FastifyReply,
    post: boolean,
  ): Promise<{ user: User; endpoint: WebhookEndpoint } | undefined> {
    if (post) {
      const form = csrfForm(context, request, reply);
      if (!form) return undefined;
      const strict = strictForm(form, ['csrf']);
      if (strict) {
        errorPage(reply, 400, 'Webhook endpoint', strict);
        return undefined;
      }
    }
    const user = await developerOf(request, reply);
    if (!user) return undefined;
    const endpoint = await store.developers.endpoint(
      user.id,
      (request.params as { endpoint: string }).endpoint,
    );
    if (!endpoint) {
      notFound(reply);
      return undefined;
    }
    return { user, endpoint };
  }

  scope.post(`${DEVELOPERS_PATH}/apps/:app/webhooks`, async (request, reply) => {
    const form = csrfForm(context, request, reply);
    if (!form) return reply;
    const user = await developerOf(request, reply);
    if (!user) return reply;
    const app = await store.developers.app(user.id, (request.params as { app: string }).app);
    if (!app) return notFound(reply);
    const strict = strictForm(form, ['csrf', 'url', 'events'], ['events']);
    if (strict) return errorPage(reply, 400, app.name, strict);
    const events = subscription(form, true);
    if (events !== null && 'message' in events) return errorPage(reply, 400, app.name, events.message);
    const text = (form.get('url') ?? '').trim();
    let url: string;
    try {
      const checked = checkEndpointUrl(text, context.settings.webhookAllowPrivate);
      if (!context.settings.webhookAllowPrivate) await resolvePublic(checked);
      url = checked.href;
    } catch (error) {
      if (!(error instanceof RefusedAddress)) throw error;
      return errorPage(reply, 400, app.name, `The endpoint URL is refused: ${error.message}`);
    }
    if ((await store.webhooks.endpoints.list(app.id)).length >= MAX_ENDPOINTS_PER_APP) {
      return errorPage(
        reply,
        409,
        app.name,
        `An app has at most ${MAX_ENDPOINTS_PER_APP} endpoints: remove one first.`,
      );
    }
    const { endpoint, secret } = await store.webhooks.endpoints.add({ appId: app.id, url, events });
    return endpointPage(request, reply, user, endpoint, { secret, notice: 'The endpoint is added.' }, 201);
  });

  scope.get(`${DEVELOPERS_PATH}/webhooks/:endpoint`, async (request, reply) => {
    const found = await owned(request, reply, false);
    if (!found) return reply;
    return endpointPage(request, reply, found.user, found.endpoint);
  });

  for (const [action, disable] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    scope.post(`${DEVELOPERS_PATH}/webhooks/:endpoint/${action}`, async (request, reply) => {
      const found = await owned(request, reply, true);
      if (!found) return reply;
      const changed =
        (await store.webhooks.endpoints.setDisabled(
          found.endpoint.id,
          disable ? { at: Date.now(), reason: 'disabled by its developer' } : null,
        )) ?? found.endpoint;
      return endpointPage(request, reply, found.user, changed, {
        notice: disable ? 'The endpoint is disabled: its deliveries wait.' : 'The endpoint is enabled.',
      });
    });
  }

  scope.post(`${DEVELOPERS_PATH}/webhooks/:endpoint/events`, async (request, reply) => {
    const form = csrfForm(context, request, reply);
    if (!form) return reply;
    const user = await developerOf(request, reply);
    if (!user) return reply;
    const endpoint = await store.developers.endpoint(
      user.id,
      (request.params as { endpoint: string }).endpoint,
    );
    if (!endpoint) return notFound(reply);
    const strict = strictForm(form, ['csrf', 'events'], ['events']);
    const events = strict ? { message: strict } : subscription(form, false);
    if (events !== null && 'message' in events) {
      return endpointPage(request, reply, user, endpoint, { error: events.message }, 400);
    }
    await store.webhooks.endpoints.setEvents(endpoint.id, events);
    const changed = (await store.developers.endpoint(user.id, endpoint.id)) ?? endpoint;
    return endpointPage(request, reply, user, changed, { notice: 'The events are saved.' });
  });

  scope.post(`${DEVELOPERS_PATH}/webhooks/:endpoint/rotate`, async (request, reply) => {
    const found = await owned(request, reply, true);
    if (!found) return reply;
    const rotated = await store.webhooks.endpoints.rotateSecret(
      found.endpoint.id,
      ENDPOINT_ROTATION_OVERLAP_MS,
    );
    if (!rotated) return notFound(reply);
    return endpointPage(request, reply, found.user, rotated.endpoint, {
      secret: rotated.secret,
      notice: 'The secret is rotated: deliveries carry a signature with each secret for 24 hours.',
    });
  });

  scope.post(`${DEVELOPERS_PATH}/webhooks/:endpoint/remove`, async (request, reply) => {
    const found = await owned(request, reply, true);
    if (!found) return reply;
    await store.webhooks.endpoints.remove(found.endpoint.id);
    return reply.code(303).header('location', `${DEVELOPERS_PATH}/apps/${found.endpoint.appId}`).send();
  });

  scope.post(`${DEVELOPERS_PATH}/webhooks/:endpoint/test`, async (request, reply) => {
    const found = await owned(request, reply, true);
    if (!found) return reply;
    if (found.endpoint.disabledAt !== null) {
      return endpointPage(
        request,
        reply,
        found.user,
        found.endpoint,
        { error: 'Enable the endpoint first.' },
        409,
      );
    }
    try {
      await store.webhooks.events.enqueuePing(found.endpoint.id, found.user.id);
    } catch (error) {
      // Disabled meanwhile.
      if (!(error instanceof StoreError)) throw error;
      return endpointPage(request, reply, found.user, found.endpoint, { error: error.message }, 409);
    }
    return endpointPage(request, reply, found.user, found.endpoint, {
      notice: 'A ping event is on its way; reload to see its delivery.',
    });
  });

  scope.post(`${DEVELOPERS_PATH}/deliveries/:delivery/redeliver`, async (request, reply) => {
    const form = csrfForm(context, request, reply);
    if (!form) return reply;
    const user = await developerOf(request, reply);
    if (!user) return reply;
    const strict = strictForm(form, ['csrf']);
    if (strict) return errorPage(reply, 400, 'Webhook endpoint', strict);
    const delivery = await store.developers.delivery(
      user.id,
      (request.params as { delivery: string }).delivery,
    );
    if (!delivery) return notFound(reply);
    const endpoint = await store.developers.endpoint(user.id, delivery.endpointId);
    if (!endpoint) return notFound(reply);
    try {
      await store.webhooks.deliveries.retry(delivery.id);
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      return endpointPage(request, reply, user, endpoint, { error: error.message }, 409);
    }
    return endpointPage(request, reply, user, endpoint, { notice: 'The delivery is due again now.' });
  });
}
