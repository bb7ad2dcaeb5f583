// A local OpenAI-compatible model for the real-host test: /v1/models, /v1/chat/completions and
// /v1/responses (streamed or not). Every request is recorded; the answer is chosen by a function
// of the request, so the test scripts what the "model" says.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ModelCall {
  at: number;
  url: string;
  /** System/developer text (chat `system` messages, or responses `instructions`). */
  system: string;
  /** Text of the current user turn: every user message after the last assistant message. */
  lastUser: string;
  reply: string;
  body: unknown;
}

export interface MockModel {
  readonly baseUrl: string;
  readonly calls: ModelCall[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
const isJson = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Text of a chat/responses content field: a string, or an array of parts with `text`. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (isJson(p) && typeof p.text === "string" ? p.text : "")).join("");
  return "";
}

export function extractPrompt(body: unknown): { system: string; lastUser: string } {
  if (!isJson(body)) return { system: "", lastUser: "" };
  const system: string[] = [];
  // The host sends the channel's body and its own context block as separate user messages.
  let userTurn: string[] = [];
  if (typeof body.instructions === "string") system.push(body.instructions);
  const turns = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : [];
  for (const turn of turns) {
    if (!isJson(turn)) continue;
    const text = contentText(turn.content);
    if (turn.role === "system" || turn.role === "developer") system.push(text);
    else if (turn.role === "assistant") userTurn = [];
    else if (turn.role === "user") userTurn.push(text);
  }
  if (typeof body.input === "string") userTurn = [body.input];
  return { system: system.join("\n"), lastUser: userTurn.join("\n") };
}

export async function startMockModel(params: { answer: (prompt: { system: string; lastUser: string }) => string }): Promise<MockModel> {
  const calls: ModelCall[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (raw += chunk));
    req.on("end", () => {
      let body: unknown = {};
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        body = {};
      }
      route(req, res, body);
    });
  });

  function route(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    const url = (req.url ?? "").split("?")[0] ?? "";
    const json = isJson(body) ? body : {};
    const model = typeof json.model === "string" ? json.model : "mock-model";
    if (url.endsWith("/models")) return send(res, { object: "list", data: [{ id: "mock-model", object: "model", owned_by: "mock" }] });
    if (!url.endsWith("/chat/completions") && !url.endsWith("/responses")) {
      return send(res, { error: { message: `mock: unknown path ${url}` } }, 404);
    }
    const prompt = extractPrompt(body);
    const reply = params.answer(prompt);
    calls.push({ at: Date.now(), url, ...prompt, reply, body });
    const created = Math.floor(Date.now() / 1000);
    const usage = { prompt_tokens: Math.ceil(prompt.system.length / 4) + Math.ceil(prompt.lastUser.length / 4), completion_tokens: Math.ceil(reply.length / 4) };
    const pieces = reply.match(/[\s\S]{1,16}/g) ?? [];
    if (url.endsWith("/chat/completions")) {
      const id = `chatcmpl-mock-${calls.length}`;
      if (!json.stream) {
        return send(res, {
          id, object: "chat.completion", created, model,
          choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }],
          usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
        });
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const chunk = (delta: Json, finish: string | null, extra: Json = {}) =>
        res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`);
      chunk({ role: "assistant", content: "" }, null);
      for (const p of pieces) chunk({ content: p }, null);
      chunk({}, "stop");
      res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } })}\n\n`);
      res.write("data: [DONE]\n\n");
      return void res.end();
    }
    const id = `resp_mock_${calls.length}`;
    const msgId = `msg_mock_${calls.length}`;
    const item = { id: msgId, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: reply, annotations: [] }] };
    const full = { id, object: "response", created_at: created, status: "completed", model, output: [item], usage: { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens, total_tokens: usage.prompt_tokens + usage.completion_tokens } };
    if (!json.stream) return send(res, full);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let seq = 0;
    const ev = (type: string, data: Json) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
    ev("response.created", { response: { ...full, status: "in_progress", output: [] } });
    ev("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } });
    ev("response.content_part.added", { item_id: msgId, output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
    for (const p of pieces) ev("response.output_text.delta", { item_id: msgId, output_index: 0, content_index: 0, delta: p });
    ev("response.output_text.done", { item_id: msgId, output_index: 0, content_index: 0, text: reply });
    ev("response.content_part.done", { item_id: msgId, output_index: 0, content_index: 0, part: { type: "output_text", text: reply, annotations: [] } });
    ev("response.output_item.done", { output_index: 0, item });
    ev("response.completed", { response: full });
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
