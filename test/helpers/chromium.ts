// Debian's Chromium driven by playwright-core, for the browser suites: where it is, the reason a suite skips
// without it, and a headless launch that also starts as root. A file of its own: the other helpers are
// imported by suites that never open a browser, and would load playwright-core for them.
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A describe's `skip`: false when Chromium is there, else the reason and how to install it. */
export const skipWithoutChromium: string | false = existsSync(CHROMIUM)
  ? false
  : `chromium is not installed at ${CHROMIUM} (apt-get install chromium, or name another with CHROMIUM_PATH)`;

/** Starts headless Chromium. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Chromium refuses to start its sandbox as root (CI containers).
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
}
