// After finish() or reset() a page moves on at once, as a receipt route does; the page the
// customer comes back to pays the same basket again under the same scope. A real page load
// each time (a link, location.assign, a reload), in Chromium, Firefox and WebKit, against
// the reference server: the second order is sent under a new key and charged, in every try.
// PAGES_BROWSERS=chromium,firefox,webkit (the default) picks the engines, for development only.
import { test } from 'node:test';
import { eachEngine, pagesServer } from './suite.mjs';
import { tries as laterTries } from './later.mjs';

const server = pagesServer();
const tries = (engine, t, spec) => laterTries(server, engine, t, spec);

// The engines play their tries side by side, each in its own browser (one at a time there).
eachEngine((engine) => {
  // P-finish-durable: a page that leaves right after finish() leaves nothing a later page takes for the attempt
  test(`finish() then a link or location.assign at once: the next page charges the same basket under a new key`, { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'finish', leaves: ['link', 'assign'] }));

  // P-finish-durable: the same with a second tab of the scope open
  test(`with a second tab of the scope open, finish() then leaving at once: the next page charges again`, { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'finish', leaves: ['link', 'assign'], tab: true }));

  // P-reset-durable: a page that leaves right after reset() leaves nothing a later page takes for the attempt
  test(`reset() then leaving at once: the next page charges the same basket under a new key`, { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'reset', leaves: ['link', 'assign'] }));

  // P-finish-durable: a reload right after finish() shows a new attempt and charges it
  test(`finish() then a reload at once: the reloaded page charges the same basket under a new key`, { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'finish', leaves: ['reload'] }));

  // docs/tabs-and-storage.md: "Such a mark is still read wherever a page looks at its
  // attempt's key".
  // P-finish-durable: the end's mark still ends the attempt when the scope's flag is gone
  test(`finish(), the scope's flag removed by a script, then a reload: the next page charges again`, { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'finish', leaves: ['reload', 'assign'], query: '&dropFlag=1', count: 10 }));

  // docs/tabs-and-storage.md: "A page that has made an end of the scope ... lists the scope's
  // marks whatever the flag".
  // P-finish-durable: the page that ended the attempt pays the next order anew when the flag is gone
  test(`finish(), the scope's flag removed by a script, then the next order in the same page: charged again`, { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'finish', leaves: ['stay'], query: '&dropFlag=1', count: 10 }));
});
