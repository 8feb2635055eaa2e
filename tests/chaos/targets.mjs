// The server under test, pluggable: anything with this shape will do.
//   url          the base the pages load from and the checks read from
//   faultUrl(i)  where the plan's fault for instance i is scheduled (faults live in
//                the instance that was asked for them)
//   restart()    kill -9 the server (or one instance of it) and bring it back, on the
//                same database and the same address
//   whenUp()     resolves when no restart is under way
//   settleMs     after the last request, how long until the server has finished what
//                killed requests left behind (the recovery of stale keys)
//   describe()   one line for the log;  stop()  ends everything it started
import path from 'node:path';
import { ROOT } from '../support/reference.mjs';
import { singleServer } from './single.mjs';
import { cluster } from './cluster.mjs';

// IDEMKEY_PKG may point at another wasm-pack output directory (as for the e2e tests).
const PKG = path.resolve(ROOT, process.env.IDEMKEY_PKG || 'pkg');

/** The single server, or with cfg.cluster the many-instance setup. */
export async function startTarget(cfg, outDir) {
  if (cfg.cluster) return cluster({ pkg: PKG, logDir: outDir, providerLatencyMs: cfg.providerLatencyMs });
  return singleServer({ pkg: PKG, logFile: path.join(outDir, 'server.log'), providerLatencyMs: cfg.providerLatencyMs });
}
