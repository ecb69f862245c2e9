// Whether a server's address is on this machine: the loopback addresses (127.0.0.0/8, ::1, an IPv4 loopback
// written as IPv6) and the name localhost. The sync asks such a server for uncompressed answers, since
// compressing costs both sides CPU and saves nothing without a network in between.

/** Whether the URL's host is a loopback address or localhost. */
export function isLoopback(url: string): boolean {
  const host = new URL(url).hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    host === '::1' ||
    /^::ffff:(?:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|7f[0-9a-f]{2}:[0-9a-f]{1,4})$/.test(host)
  );
}
