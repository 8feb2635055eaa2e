// The cluster target (see targets.mjs): a PostgreSQL this run starts, the payment
// provider as its own service, three idemkey-server instances on that database and
// nginx round-robin in front of them, the pages' one origin. restart() kills one
// instance with SIGKILL (the next one each time) and brings it back on its own port;
// nginx and the other two keep serving. Faults live in the instance that was asked for
// them, so each planned fault goes to the instance the plan names.
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../support/net.mjs';
import { startPostgres } from '../support/postgres.mjs';
import { SERVER, mustExist } from '../support/reference.mjs';
import { SETTLE_MS, killed, launch, relaunch, restarter, serverFlags } from './servers.mjs';

const INSTANCES = 3;
const NGINX_MS = 10000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function nginxConf(dir, port, upstreams) {
  return `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/nginx-body;
  proxy_temp_path ${dir}/nginx-proxy;
  fastcgi_temp_path ${dir}/nginx-fastcgi;
  uwsgi_temp_path ${dir}/nginx-uwsgi;
  scgi_temp_path ${dir}/nginx-scgi;
  # max_fails=0: a dropped connection (a fault, a killed instance) must not take the
  # instance out of the rotation for fail_timeout; with all three out, nginx answers
  # 502 to everything, page loads included.
  upstream idemkey {
${upstreams.map((a) => `    server ${a} max_fails=0;`).join('\n')}
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://idemkey;
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header Connection "";
      # A POST is never re-sent to another instance by nginx: retrying is the client's job.
      proxy_next_upstream off;
    }
  }
}
`;
}

/** The whole cluster; its logs go to logDir. */
export async function cluster({ pkg, logDir, providerLatencyMs }) {
  const [bin, ...binArgs] = SERVER.split(' ');
  mustExist(bin, 'build it with `make server`');
  mustExist(path.join(pkg, 'idemkey.js'), 'build the module with `make build`');
  mkdirSync(logDir, { recursive: true });
  const dir = mkdtempSync('/tmp/idemkey-chaos-cluster-');
  chmodSync(dir, 0o711);       // nginx's worker (nobody) must reach its temp dirs in it
  const logFd = openSync(path.join(logDir, 'cluster.log'), 'w');
  const stops = [];          // what stop() undoes, last first
  const stop = async () => {
    while (stops.length) await stops.pop()();
    closeSync(logFd);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const pg = await startPostgres({ maxConnections: 200 });
    stops.push(pg.stop);
    const provider = await launch(bin, [...binArgs, 'provider', '--addr', '127.0.0.1:0',
      '--db', path.join(dir, 'provider.db'), '--latency-ms', String(providerLatencyMs), '--log-level', 'warn'], logFd);
    stops.push(() => killed(provider.child));
    const instances = [];
    for (let n = 1; n <= INSTANCES; n += 1) {
      const args = [...binArgs, '--database-url', pg.url, '--provider-url', provider.url,
        '--instance', `instance-${n}`, ...serverFlags(pkg)];
      const { child, url } = await launch(bin, [...args, '--addr', '127.0.0.1:0'], logFd);
      const inst = { args, child, url, addr: new URL(url).host };
      instances.push(inst);
      stops.push(() => killed(inst.child));
    }
    const port = await freePort();
    const conf = path.join(dir, 'nginx.conf');
    writeFileSync(conf, nginxConf(dir, port, instances.map((i) => i.addr)));
    const nginx = await launch('nginx', ['-p', dir, '-c', conf, '-e', path.join(dir, 'nginx-error.log')], logFd, { listens: false });
    // SIGTERM: nginx's master then stops its worker, which SIGKILL would leave running.
    stops.push(() => killed(nginx.child, 'SIGTERM'));
    const url = `http://127.0.0.1:${port}`;
    for (let until = Date.now() + NGINX_MS; ;) {
      try { if ((await fetch(`${url}/healthz`)).ok) break; } catch { /* not yet */ }
      if (Date.now() > until) throw new Error(`nginx did not answer on ${url} within ${NGINX_MS / 1000} s`);
      await sleep(100);
    }

    const restarts = restarter();
    let next = 0;
    return {
      name: 'cluster',
      url,
      faultUrl: (i) => instances[i % instances.length].url,
      restart: () => restarts.run(async () => {
        const inst = instances[next % instances.length];
        next += 1;
        await killed(inst.child);
        inst.child = (await relaunch(bin, inst.args, inst.addr, logFd)).child;
      }),
      whenUp: restarts.whenUp,
      settleMs: SETTLE_MS,
      describe: () => `nginx at ${url}, round-robin over ${instances.map((i) => i.addr).join(', ')} `
        + `on PostgreSQL ${pg.url}, provider service ${provider.url}`,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
