// finish() where the record's answer fell back to this tab's sessionStorage (no IndexedDB,
// localStorage refusing the answer) while localStorage keeps the pending copy the other
// tabs read: the end cannot be stored where they read it, and finish() must say so; a next
// window that reads the pending copy is the limit the docs admit then. In Chromium, Firefox
// and WebKit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { poll } from './sessions.mjs';
import { eachEngine, pagesServer } from './suite.mjs';

const server = pagesServer();

eachEngine((engine) => {
  // P-end-not-durable: without IndexedDB, the answer refused by localStorage: finish() returns false
  test('finish() without IndexedDB, the answer in sessionStorage only: finish() says it is not durable', { timeout: 60000 }, async (t) => {
    const session = await engine.session();
    const id = Math.random().toString(36).slice(2, 10);
    const customer = `no-idb-${id}`;
    const where = `${server.url}/no-idb-end.html?scope=cart-${id}&customer=${customer}`;
    await session.go('main', `${where}&phase=1`);
    const first = await poll(session, 'main', () => window.report || null, 15000);
    t.diagnostic(JSON.stringify(first));
    assert.equal(first.result.status, 201, `the first order was not paid: ${JSON.stringify(first)}`);
    assert.equal(first.storage, 'session', 'the answer did not fall back to sessionStorage');
    assert.equal(first.durable, false, 'finish() returned true, though the other tabs read no end');
  });
});
