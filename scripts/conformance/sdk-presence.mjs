// The official ACP SDK's own presence client (acp-ts HeartbeatClient), pointed at a network by its
// domain, as evol runs it: create and load an aid, sign in (online), open the message socket, then
// HeartbeatClient.online() at the heartbeat server the access point names; invites over presence are
// accepted over the socket as the SDK's own server does. Used by test/conformance/sdk-presence.test.ts.
// Usage: SHIM_DOMAIN=<domain> NODE_EXTRA_CA_CERTS=<ca.pem> node --import <kit>/dns-shim.mjs sdk-presence.mjs
//          --dist <acp-ts dist> --ap <domain:port> --domain <domain> --dir <storage dir>
// Prints `sdk-presence: online <aid>` once the heartbeat client is online, `sdk-presence: invite
// <session id> from <inviter>` per invite; `sdk-presence FAIL: …` and exit 1 on a failure. Runs
// until SIGTERM.
import { createRequire } from 'node:module';
import path from 'node:path';

const args = process.argv.slice(2);
const opt = (k) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : undefined; };
const out = console.log;
const fail = (s) => { out(`sdk-presence FAIL: ${s}`); process.exit(1); };
console.log = (...a) => { if (String(a[0]).startsWith('sdk-presence')) out(...a); };
console.info = console.warn = console.debug = () => {};
console.error = (...a) => process.stderr.write(a.map((x) => (x instanceof Error ? x.message : typeof x === 'string' ? x : '')).join(' ').slice(0, 300) + '\n');

const sdk = createRequire(import.meta.url)(path.join(opt('--dist'), 'index.js'));
const domain = opt('--domain');
try {
  const manager = sdk.AgentManager.getInstance();
  const acp = manager.initACP(opt('--ap'), 'conformance-seed', opt('--dir'));
  acp.setAutoGenerateAgentMd?.(false);
  const aid = await acp.createAid(`sdkpresence${Date.now() % 100000}.${domain}`);
  if (!aid) fail('createAid returned nothing');
  await acp.loadAid(aid);
  const config = await acp.online();
  if (!config?.heartbeatServer) fail(`the access point named no heartbeat server: ${JSON.stringify(config)}`);
  const aws = manager.initAWS(aid, config);
  await aws.startWebSocket();
  const hb = new sdk.HeartbeatClient(aid, config.heartbeatServer, 'conformance-seed');
  hb.onInvite((invite) => {
    out(`sdk-presence: invite ${invite.sessionId} from ${invite.inviterAgentId}`);
    aws.acceptInviteFromHeartbeat(invite.sessionId, invite.inviterAgentId, invite.inviteCode);
  });
  if (!(await hb.online())) fail('HeartbeatClient.online() returned false');
  out(`sdk-presence: online ${aid}`);
  process.on('SIGTERM', () => { hb.offline(); process.exit(0); });
  setInterval(() => {}, 1 << 30);
} catch (e) {
  fail(e?.message ?? String(e));
}
