// The payment API behind the app's own origin: the page posts to /api/charges and Next
// forwards it, Idempotency-Key header included. IDEMKEY_API is read when `next build` runs.
const api = process.env.IDEMKEY_API ?? "http://127.0.0.1:8080";

/** @type {import('next').NextConfig} */
export default {
  async rewrites() {
    return [{ source: "/api/:path*", destination: `${api}/api/:path*` }];
  },
};
