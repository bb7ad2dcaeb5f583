// The attacker of the sign-in round of `npm run bench -- server`, in its own process: from the
// same address as the member (127.0.0.1), BENCH_CONNECTIONS connections keep 50 first sign-in
// steps each in flight — half for made-up aids, half naming BENCH_MEMBER — from "go" until
// "stop", which reports how many were answered with each status.
import { connect, type Socket } from "node:net";

const url = new URL(process.env.BENCH_URL!);
const member = process.env.BENCH_MEMBER!;
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const statuses: Record<string, number> = {};
const sockets: Socket[] = [];
let seq = 0;
let running = false;

const request = () => {
  const i = ++seq;
  const body = JSON.stringify({ agent_id: i % 2 === 0 ? member : `x${i}.acp.local`, request_id: `r${i}` });
  return `POST /api/message/sign_in HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

function open(): void {
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  sockets.push(socket);
  socket.on("error", () => {});
  let pending = "";
  socket.on("connect", () => socket.write(Array.from({ length: 50 }, request).join("")));
  socket.on("data", (d) => {
    pending += d.toString("latin1");
    // Each answer is a small JSON body with a content-length; count status lines, send one more per answer.
    const answers = [...pending.matchAll(/HTTP\/1\.1 (\d{3}) /g)];
    if (answers.length === 0) return;
    pending = pending.slice(answers.at(-1)!.index! + 12);
    for (const a of answers) statuses[a[1]!] = (statuses[a[1]!] ?? 0) + 1;
    if (running) socket.write(Array.from({ length: answers.length }, request).join(""));
  });
  socket.on("close", () => running && open());
}

process.on("message", (msg: string) => {
  if (msg === "go") {
    running = true;
    for (let c = 0; c < connections; c++) open();
  } else if (msg === "stop") {
    running = false;
    for (const s of sockets) s.destroy();
    process.send!({ statuses }, () => process.exit(0));
  }
});
process.send!({ ready: true });
