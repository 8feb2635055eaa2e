// The audited payment page's server: one origin that serves the page's files and the package
// with the headers a locked-down payment page sends (the documented Content-Security-Policy
// with a `report-to` endpoint, Reporting-Endpoints and Integrity-Policy), passes /api/ to the
// reference server behind it (so the page talks to its own origin only), and keeps every
// report the browser POSTs to the endpoint. It serves HTTPS, as a payment page is served, with a
// certificate made for the run (openssl): Chromium posts the Reporting API's reports only
// for a page served over https (over http, at 127.0.0.1, it dropped them all).
import { execFileSync } from "node:child_process";
import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { POLICY } from "../csp/policy.mjs";

export const REPORT_PATH = "/csp-reports";
export const HEADERS = {
  "content-security-policy": `${POLICY}; report-to csp`,
  "reporting-endpoints": `csp="${REPORT_PATH}"`,
  "integrity-policy": "blocked-destinations=(script), endpoints=(csp)",
};
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };

/** A self-signed certificate for 127.0.0.1, made in `dir`: { key, cert }. */
export function selfSigned(dir) {
  const key = path.join(dir, "key.pem");
  const cert = path.join(dir, "cert.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { stdio: "pipe" });
  return { key: readFileSync(key), cert: readFileSync(cert) };
}

/**
 * Serves `www` at /, `pkg` at /pkg/ and `api` (an http origin) at /api/, over https with
 * `tls` ({ key, cert }); resolves with its url, the reports received and close().
 */
export async function startFront({ www, pkg, api, tls }) {
  const reports = [];
  const server = https.createServer(tls, (req, res) => {
    const url = new URL(req.url, "http://front");
    if (req.method === "POST" && url.pathname === REPORT_PATH) {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        try {
          const parsed = JSON.parse(body);
          reports.push(...(Array.isArray(parsed) ? parsed : [parsed]));
        } catch {
          reports.push({ type: "unreadable", body });
        }
        res.writeHead(204).end();
      });
      return;
    }
    if (url.pathname.startsWith("/api/")) {
      const upstream = http.request(new URL(req.url, api), { method: req.method, headers: { ...req.headers, host: new URL(api).host } }, (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      });
      upstream.on("error", (e) => res.writeHead(502).end(String(e)));
      req.pipe(upstream);
      return;
    }
    const [base, rel] = url.pathname.startsWith("/pkg/") ? [pkg, url.pathname.slice(5)] : [www, url.pathname.slice(1)];
    const file = path.join(base, path.normalize(rel));
    if (!file.startsWith(base) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, HEADERS).end();
      return;
    }
    res.writeHead(200, { ...HEADERS, "content-type": TYPES[path.extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
    createReadStream(file).pipe(res);
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    url: `https://127.0.0.1:${server.address().port}`,
    reports,
    close: () => new Promise((ok) => { server.closeAllConnections(); server.close(ok); }),
  };
}
