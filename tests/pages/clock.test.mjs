// A page's wall clock is no witness of what came first. The customer pays; the page's
// clock then steps back (2 s, 60 s) before the receipt route calls finish() or reset(), or
// the clock is rounded to 100 ms throughout; the page leaves at once (a link, a reload),
// and the next page pays the next order of the same basket under the same scope: it is
// sent under a new key and charged, never answered from the attempt that ended. Date.now
// is set on each page before the module loads (tests/pages/www/clock.js). In Chromium,
// Firefox and WebKit, CLOCK_TRIES (4) tries a case, half leaving by a link, half by a
// reload: the clock each page reads is set, not drawn, so what the clock changes plays
// out the same in every try. Each try also leaves at once after its end, a race that
// later-page.test.mjs plays 20 times a case with the page's own clock.
import { test } from 'node:test';
import { eachEngine, pagesServer } from './suite.mjs';
import { tries as laterTries } from './later.mjs';

const CLOCK_TRIES = Number(process.env.CLOCK_TRIES || 4);

const server = pagesServer();
const tries = (engine, t, spec) => laterTries(server, engine, t, { page: 'clock.html', count: CLOCK_TRIES, ...spec });

eachEngine((engine) => {
  // P-end-without-clock: a clock set back between the payment and finish() cannot reorder them
  // P-finish-durable: the clock set back 2 s before finish(): the next page charges the next order under a new key
  test('the clock steps back 2 s between the payment and finish(), the page leaves: the next page charges the next order under a new key', { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'finish', leaves: ['link', 'reload'], query: '&clock=back-2000' }));

  // P-finish-durable: the clock set back 60 s before finish(): the next page charges the next order under a new key
  test('the clock steps back 60 s between the payment and finish(), the page leaves: the next page charges the next order under a new key', { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'finish', leaves: ['link', 'reload'], query: '&clock=back-60000' }));

  // P-reset-durable: the clock set back 2 s before reset(): the next page charges under a new key
  test('the clock steps back 2 s between the payment and reset(), the page leaves: the next page charges under a new key', { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'reset', leaves: ['link', 'reload'], query: '&clock=back-2000' }));

  // P-finish-durable: a clock rounded to 100 ms: the next page charges the next order under a new key
  test('a clock rounded to 100 ms, finish(), the page leaves: the next page charges the next order under a new key', { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'finish', leaves: ['link', 'reload'], query: '&clock=round-100' }));
});
