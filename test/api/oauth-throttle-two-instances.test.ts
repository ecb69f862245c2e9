// The guess throttles (sign-in and device code entry) against a hostile client, on two instances sharing Redis (a burst split between them)
// (the suite: test/helpers/oauth-throttle.ts).
import { guessThrottleSuite } from '../helpers/oauth-throttle.ts';

guessThrottleSuite({ name: 'two instances sharing Redis', instances: 2, redis: 'shared' });
