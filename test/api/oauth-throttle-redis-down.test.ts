// The guess throttles (sign-in and device code entry) against a hostile client, on one instance whose Redis does not answer (it counts in the process alone)
// (the suite: test/helpers/oauth-throttle.ts).
import { guessThrottleSuite } from '../helpers/oauth-throttle.ts';

guessThrottleSuite({ name: 'one instance whose Redis does not answer', instances: 1, redis: 'unreachable' });
