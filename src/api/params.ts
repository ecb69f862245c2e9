// Strict query parameters (docs/design.md 13): plain decimal integers in range, no unknown names, never clamped.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../platform/http/errors.ts';
import { zonedTimestampRule } from './timestamp.ts';

interface PropertySchema {
  type?: string | readonly string[];
  minimum?: number;
  maximum?: number;
  enum?: readonly string[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
}

export interface QuerySchema {
  type: 'object';
  additionalProperties: false;
  properties: Record<string, PropertySchema>;
}

/** The range a parameter accepts, in words, for error descriptions. */
export function describeParam(name: string, schema: PropertySchema | undefined): string {
  if (!schema) return `unknown parameter "${name}"`;
  if (schema.enum) return `${name} must be one of: ${schema.enum.join(', ')}`;
  if (schema.format === 'date-time') return zonedTimestampRule(name);
  if (schema.format === 'date') return `${name} must be a calendar date, YYYY-MM-DD`;
  if (schema.pattern) return `${name} must match ${schema.pattern}`;
  if (schema.maxLength !== undefined)
    return `${name} must be ${schema.minLength ?? 0} to ${schema.maxLength} characters`;
  if (schema.type === 'boolean') return `${name} must be true or false`;
  if (schema.type === 'integer') {
    if (schema.maximum !== undefined)
      return `${name} must be an integer from ${schema.minimum ?? 0} to ${schema.maximum}`;
    return `${name} must be an integer of at least ${schema.minimum ?? 0}`;
  }
  return `${name} is not valid`;
}

/** The parameter's schema: an own property only, or `constructor` and `__proto__` would find Object's. */
export function paramSchema(
  schema: { properties?: Record<string, PropertySchema> } | undefined,
  name: string,
): PropertySchema | undefined {
  const properties = schema?.properties;
  return properties && Object.hasOwn(properties, name) ? properties[name] : undefined;
}

/**
 * Runs before schema validation: Ajv coerces " 10", "1e2" and "0x10" to numbers, which would silently
 * accept values no client meant; here an integer must be plain digits, and every parameter given once.
 * Leading zeros are fine (007 is 7, also with twenty of them). A number above the largest one held exactly
 * is refused here with the parameter's range, as Ajv would round it or, past 1e308, let Infinity through
 * `maximum`; the schema checks the rest of the range.
 */
export function checkRawQuery(request: FastifyRequest, schema: QuerySchema): void {
  const query = request.query as Record<string, unknown>;
  for (const [name, value] of Object.entries(query)) {
    const prop = paramSchema(schema, name);
    if (!prop) throw new ApiError('invalid_request', `unknown parameter "${name}"`);
    if (typeof value !== 'string') throw new ApiError('invalid_request', `${name} must be given once`);
    if (prop.type === 'integer' && !(/^[0-9]+$/.test(value) && Number.isSafeInteger(Number(value)))) {
      throw new ApiError('invalid_request', describeParam(name, prop));
    }
  }
}

/**
 * A list's length (docs/api.md "Totals"): counted, or, for a filtered list with more matches than the
 * server counts (FILTER_TOTAL_MAX), only known to exceed that bound.
 */
export type ListTotal = { count: number } | { exceeds: number };

/** The header that says a list's length: `X-Total-Count`, or `X-Total-Count-Exceeds` when not counted to the end. */
export function totalHeaders(reply: FastifyReply, total: ListTotal): void {
  if ('count' in total) reply.header('x-total-count', String(total.count));
  else reply.header('x-total-count-exceeds', String(total.exceeds));
}

/**
 * The list's length as a page's ETag reads it (plugins/conditional.ts): a count as it always has, a total
 * not counted to the end as `>` and its bound; from the answer's headers, or '' without either.
 */
export function totalTag(count: string, exceeds: string): string {
  return count || (exceeds && `>${exceeds}`);
}

/**
 * RFC 8288 Link header for offset paging: rel="next" and rel="last" (the page holding the last of `total`
 * items, when the total was counted) while more items exist, rel="prev" after the first page.
 */
export function pageLinks(
  request: FastifyRequest,
  limit: number,
  offset: number,
  hasMore: boolean,
  total: ListTotal,
): string | undefined {
  // Root-relative also for a request in absolute-form (`GET http://host/api/v1/games`, RFC 9112 3.2.2), whose
  // URL names a scheme and host that the client chose.
  const path = (request.url.split('?')[0] ?? '').replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/, '');
  const base = new URLSearchParams(request.query as Record<string, string>);
  const link = (to: number, rel: string) => {
    const params = new URLSearchParams(base);
    params.set('limit', String(limit));
    params.set('offset', String(to));
    return `<${path}?${params}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (hasMore) {
    links.push(link(offset + limit, 'next'));
    // Counted apart from the page: a write in between can leave it at or before this page. A total not
    // counted to the end names no last page.
    if ('count' in total) {
      const last = Math.floor(Math.max(0, total.count - 1) / limit) * limit;
      if (last > offset) links.push(link(last, 'last'));
    }
  }
  if (offset > 0) links.push(link(Math.max(0, offset - limit), 'prev'));
  return links.length ? links.join(', ') : undefined;
}
