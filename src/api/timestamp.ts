// Timestamps that clients send (the feed's `since`, docs/design.md 21): ISO 8601 date and time WITH a zone, as
// RFC 3339 profiles it. Without a zone the instant is ambiguous, so it is refused rather than guessed.

/** What a client is told when a timestamp parameter is not one parseZonedTimestamp takes. */
export const zonedTimestampRule = (name: string) =>
  `${name} must be an ISO 8601 date and time with a zone, like 2026-11-21T06:13:00.000Z or ` +
  '2026-11-21T08:13:00+02:00 (write + as %2B in a URL)';

const ZONED =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}(?::\d{2})?)$/;

/**
 * Milliseconds since the epoch, rounded up to the next millisecond when finer digits are given (so that
 * "at or after" stays exact against millisecond times); undefined for anything that is not a real instant.
 */
export function parseZonedTimestamp(text: string): number | undefined {
  const m = ZONED.exec(text);
  if (!m) return undefined;
  const field = (i: number) => Number(m[i] ?? 0);
  const [year, month, day, hour, minute, second] = [
    field(1),
    field(2),
    field(3),
    field(4),
    field(5),
    field(6),
  ];
  const fraction = m[7] ?? '';
  const zone = m[8] ?? 'Z';
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return undefined; // e.g. February 30th, which Date would roll over into March
  }
  const offset = zoneOffsetMinutes(zone);
  if (offset === undefined) return undefined;
  const millis = Number(fraction.slice(0, 3).padEnd(3, '0'));
  const finer = /[1-9]/.test(fraction.slice(3)) ? 1 : 0;
  return date.getTime() + ((hour * 60 + minute - offset) * 60 + second) * 1000 + millis + finer;
}

function zoneOffsetMinutes(zone: string): number | undefined {
  if (zone === 'Z' || zone === 'z') return 0;
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4, 6) || 0);
  if (hours > 23 || minutes > 59) return undefined;
  return (zone[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
}
