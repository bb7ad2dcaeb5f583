// Loaded with `node --import` into a CLI child process: names under ACP_TEST_LOOPBACK_DOMAIN
// (`acp3.D`, `group.D`, `dave.D`, `D`) resolve to 127.0.0.1, as DNS would for a real domain.
// Every other name goes to the system resolver. Node's sockets (http, https, ws, fetch) look up
// through dns.lookup, so this is the one place to answer.
import dns from "node:dns";

const domain = (process.env.ACP_TEST_LOOPBACK_DOMAIN ?? "").toLowerCase();
if (domain) {
  const ours = (host) => typeof host === "string" && (host.toLowerCase() === domain || host.toLowerCase().endsWith(`.${domain}`));
  const original = dns.lookup;
  dns.lookup = function lookup(host, options, callback) {
    if (!ours(host)) return original.call(dns, host, options, callback);
    const cb = typeof options === "function" ? options : callback;
    const all = typeof options === "object" && options !== null && options.all === true;
    process.nextTick(() => (all ? cb(null, [{ address: "127.0.0.1", family: 4 }]) : cb(null, "127.0.0.1", 4)));
  };
  const originalPromise = dns.promises.lookup;
  dns.promises.lookup = (host, options) =>
    ours(host) ? Promise.resolve(options?.all ? [{ address: "127.0.0.1", family: 4 }] : { address: "127.0.0.1", family: 4 }) : originalPromise.call(dns.promises, host, options);
}
