// Where a webhook may go (docs/webhooks.md#safe-addresses): an https URL whose host is a public address, never
// a loopback, private, link-local (the cloud metadata service at 169.254.169.254), shared, unspecified,
// multicast or reserved one, in any of their IPv4 and IPv6 forms. Checked when the operator adds the
// endpoint, and again on the address each delivery connects to: a name that resolved to a public address then
// may resolve to 127.0.0.1 now (DNS rebinding), so the delivery resolves the name itself and connects only to
// what it checked. WEBHOOK_ALLOW_PRIVATE=1 allows every address, and http, for receivers on one's own network.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The longest endpoint URL. */
export const MAX_URL_LENGTH = 2048;

/** A URL or address that a webhook may not go to, said for the operator. */
export class RefusedAddress extends Error {
  readonly code = 'ERR_WEBHOOK_ADDRESS';
}

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  uniqueLocal: 'a private (unique local) address',
  linkLocal: 'a link-local address (169.254.169.254 is the cloud metadata service)',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
};

/** Why an address is not public (its range in words), or undefined when it is: global unicast only. */
export function notPublic(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  // IPv4-mapped and -compatible IPv6 addresses (::ffff:127.0.0.1, ::127.0.0.1) are judged as the IPv4 address
  // they carry. ipaddr.js converts only the mapped ones: a compatible one (::7f00:1, deprecated by RFC 4291 but
  // still carried to its IPv4 address by stacks with an automatic tunnel) reads as global unicast otherwise.
  let parsed = ipaddr.process(address);
  if (
    parsed instanceof ipaddr.IPv6 &&
    parsed.range() === 'unicast' &&
    parsed.parts.slice(0, 6).every((p) => p === 0)
  )
    parsed = new ipaddr.IPv4(parsed.toByteArray().slice(12));
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  return RANGE_WORDS[range] ?? `a reserved address (${range})`;
}

const ALLOW_HINT = 'WEBHOOK_ALLOW_PRIVATE=1 allows it, for a receiver on your own network';

/**
 * The endpoint URL, checked as far as it can be without a name lookup: https (or, allowing private
 * addresses, http), no user name or password (the signature is what authenticates a delivery), no fragment,
 * and a host that, when an IP address in any form the URL parser reads (2130706433, 0x7f.1, [::ffff:7f00:1]),
 * is public.
 */
export function checkEndpointUrl(text: string, allowPrivate: boolean): URL {
  if (text.length > MAX_URL_LENGTH)
    throw new RefusedAddress(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RefusedAddress(`"${text}" is not a URL: write it like https://example.org/webhooks`);
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    const http = url.protocol === 'http:' ? ` (http: ${ALLOW_HINT})` : '';
    throw new RefusedAddress(`the URL must be https, not ${url.protocol.slice(0, -1)}${http}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new RefusedAddress('the URL must not hold a user name or password: deliveries are signed instead');
  }
  if (url.hash !== '') throw new RefusedAddress('the URL must not hold a fragment (#...)');
  if (url.hostname === '') throw new RefusedAddress('the URL has no host');
  const literal = hostAddress(url);
  if (literal !== undefined && !allowPrivate) refuseUnlessPublic(url.hostname, literal);
  return url;
}

/** The URL's host as an IP address, when it is one (an IPv6 one without its brackets). */
export function hostAddress(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return ipaddr.isValid(host) ? host : undefined;
}

function refuseUnlessPublic(host: string, address: string): void {
  const why = notPublic(address);
  if (why === undefined) return;
  const resolved = host.replace(/^\[(.*)\]$/, '$1') === address ? '' : ` resolves to ${address}, which`;
  throw new RefusedAddress(`${host}${resolved} is ${why}, not a public one (${ALLOW_HINT})`);
}

/** dns.lookup with every address: what a lookup asks of the resolver (a test passes another). */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true } satisfies LookupAllOptions, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

/**
 * Resolves the URL's host and checks every address it has (one private address among public ones is refused:
 * which one a connection takes is not ours to choose). Returns the addresses; an IP address is its own.
 */
export async function resolvePublic(url: URL, resolve: Resolve = systemResolve): Promise<string[]> {
  const literal = hostAddress(url);
  if (literal !== undefined) {
    refuseUnlessPublic(url.hostname, literal);
    return [literal];
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(url.hostname);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EAI_AGAIN' ? 'the name lookup failed for now (EAI_AGAIN)' : 'no such host';
    throw new RefusedAddress(`cannot resolve ${url.hostname}: ${why}`);
  }
  if (addresses.length === 0) throw new RefusedAddress(`cannot resolve ${url.hostname}: no address`);
  for (const { address } of addresses) refuseUnlessPublic(url.hostname, address);
  return addresses.map((a) => a.address);
}

/**
 * A `lookup` for http.request that resolves the name and hands the connection only addresses it checked
 * (every one public, or a RefusedAddress error). Node.js calls it for a host name, never for an IP address,
 * which checkEndpointUrl checks before the request.
 */
export function guardedLookup(resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        try {
          if (addresses.length === 0) throw new RefusedAddress(`cannot resolve ${hostname}: no address`);
          for (const { address } of addresses) refuseUnlessPublic(hostname, address);
        } catch (error) {
          callback(error as NodeJS.ErrnoException, '', 0);
          return;
        }
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const usable = family ? addresses.filter((a) => a.family === family) : addresses;
        if (options.all) {
          (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, usable);
          return;
        }
        const first = usable[0];
        if (!first)
          callback(
            Object.assign(new Error(`no IPv${family} address for ${hostname}`), { code: 'ENOTFOUND' }),
            '',
            0,
          );
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
