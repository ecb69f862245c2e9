// The guess throttles (sign-in and device code entry) against a hostile client, on one instance with its counters in the process
// (the suite: test/helpers/oauth-throttle.ts).
import { guessThrottleSuite } from '../helpers/oauth-throttle.ts';

guessThrottleSuite({ name: 'one instance, counters in the process', instances: 1, redis: 'none' });
