// Added to every page of the audit before its own scripts run (playwright's addInitScript):
// records, in `window.__observed`, what the page's scripts touch, each call passed on to the
// browser's own method unchanged: storage keys set, read and removed; IndexedDB databases
// opened and object stores made or used; BroadcastChannels made and what is posted on them;
// Web Locks asked for; listeners added to window and document; and the page's CSP violation
// events. Each entry is kept only when the module's file (/pkg/idemkey.js) is on the call's
// stack: the page's own scripts and the test driver's (playwright adds listeners of its own)
// are not the module.
(() => {
  const byModule = () => /\/pkg\/idemkey\.js:/.test(new Error().stack);
  const seen = (window.__observed = { storage: [], databases: [], stores: [], channels: [], posted: [], locks: [], listeners: [], violations: [] });
  document.addEventListener("securitypolicyviolation", (e) => {
    seen.violations.push({ directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample });
  });

  const area = (s) => (s === window.localStorage ? "localStorage" : s === window.sessionStorage ? "sessionStorage" : "Storage");
  for (const method of ["setItem", "getItem", "removeItem"]) {
    const own = Storage.prototype[method];
    Storage.prototype[method] = function (key, ...rest) {
      if (byModule()) seen.storage.push([area(this), method, String(key)]);
      return own.call(this, key, ...rest);
    };
  }

  const open = IDBFactory.prototype.open;
  IDBFactory.prototype.open = function (name, ...rest) {
    if (byModule()) seen.databases.push(String(name));
    return open.call(this, name, ...rest);
  };
  const remove = IDBFactory.prototype.deleteDatabase;
  IDBFactory.prototype.deleteDatabase = function (name) {
    if (byModule()) seen.databases.push(String(name));
    return remove.call(this, name);
  };
  const create = IDBDatabase.prototype.createObjectStore;
  IDBDatabase.prototype.createObjectStore = function (name, ...rest) {
    if (byModule()) seen.stores.push(`${this.name}/${name}`);
    return create.call(this, name, ...rest);
  };
  const transaction = IDBDatabase.prototype.transaction;
  IDBDatabase.prototype.transaction = function (names, ...rest) {
    if (byModule()) for (const n of [].concat(names)) seen.stores.push(`${this.name}/${n}`);
    return transaction.call(this, names, ...rest);
  };

  const Channel = window.BroadcastChannel;
  window.BroadcastChannel = class BroadcastChannel extends Channel {
    constructor(name) {
      super(name);
      if (byModule()) seen.channels.push(String(name));
    }
  };
  const post = Channel.prototype.postMessage;
  Channel.prototype.postMessage = function (message) {
    if (byModule()) seen.posted.push([this.name, JSON.stringify(message)]);
    return post.call(this, message);
  };

  if (window.LockManager) {
    const request = LockManager.prototype.request;
    LockManager.prototype.request = function (name, ...rest) {
      if (byModule()) seen.locks.push(String(name));
      return request.call(this, name, ...rest);
    };
  }

  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, ...rest) {
    if ((this === window || this === document) && byModule()) seen.listeners.push([this === window ? "window" : "document", String(type)]);
    return add.call(this, type, ...rest);
  };
})();
