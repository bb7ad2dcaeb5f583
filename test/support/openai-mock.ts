// A local OpenAI-compatible HTTP server for tests: /v1/chat/completions (streaming and not) and
// /v1/models on 127.0.0.1, port 0. Replies are scripted per request (errors, delays, stalls,
// usage with cached tokens); every request is recorded with its parsed body.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface MockUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Sent as `prompt_tokens_details.cached_tokens`. */
  cached_tokens?: number;
}

/** What the mock does for one chat/completions request. */
export interface MockStep {
  text?: string;
  usage?: MockUsage;
  /** Answer with this HTTP status and an OpenAI-style error body instead of a completion. */
  status?: number;
  errorMessage?: string;
  /** `retry-after-ms` on error answers, so the SDK's retry waits this long (default 1). */
  retryAfterMs?: number;
  /** Wait this long before sending anything (headers included). */
  delayMs?: number;
  /** Streaming only: send this many content chunks, then go quiet without ending the response. */
  stallAfterChunks?: number;
  /** Streaming chunk size in characters (default 6). */
  chunkSize?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined when empty or not JSON). */
  body: any;
  /** The step that answered it (chat/completions only). */
  step?: MockStep;
}

export interface OpenAIMock {
  /** e.g. http://127.0.0.1:41234/v1 — pass as the SDK's baseURL. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Only the chat/completions requests, in arrival order. */
  chatRequests(): RecordedRequest[];
  /** Queue steps for the next chat/completions requests; when the queue is empty the default answers. */
  enqueue(...steps: MockStep[]): void;
  close(): Promise<void>;
}

export const MOCK_DEFAULT_TEXT = "MOCK-REPLY: hello from the mock model";
const DEFAULT_USAGE: MockUsage = { prompt_tokens: 10, completion_tokens: 5 };

function usageJson(u: MockUsage) {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    ...(u.cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens: u.cached_tokens } } : {}),
  };
}

function splitChars(text: string, size: number): string[] {
  const chars = [...text];
  const parts: string[] = [];
  for (let i = 0; i < chars.length; i += size) parts.push(chars.slice(i, i + size).join(""));
  return parts;
}

export async function startOpenAIMock(p: { defaultStep?: MockStep } = {}): Promise<OpenAIMock> {
  const queue: MockStep[] = [];
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let seq = 0;

  const later = (ms: number, res: ServerResponse, fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      if (!res.destroyed) fn();
    }, ms);
    timers.add(t);
    res.on("close", () => {
      clearTimeout(t);
      timers.delete(t);
    });
  };

  const sendJson = (res: ServerResponse, status: number, obj: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(obj));
  };

  function answerChat(res: ServerResponse, body: any, step: MockStep): void {
    if (step.status !== undefined && step.status >= 400) {
      sendJson(
        res,
        step.status,
        { error: { message: step.errorMessage ?? `mock error ${step.status}`, type: "mock_error", code: null } },
        { "retry-after-ms": String(step.retryAfterMs ?? 1) },
      );
      return;
    }
    const id = `chatcmpl-mock-${++seq}`;
    const created = Math.floor(Date.now() / 1000);
    const model = typeof body?.model === "string" ? body.model : "mock-model";
    const text = step.text ?? MOCK_DEFAULT_TEXT;
    const usage = usageJson(step.usage ?? DEFAULT_USAGE);
    if (body?.stream !== true) {
      sendJson(res, 200, {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage,
      });
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`);
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
    const parts = splitChars(text, step.chunkSize ?? 6);
    const stallAt = step.stallAfterChunks;
    for (const [i, part] of parts.entries()) {
      if (stallAt !== undefined && i >= stallAt) return; // headers sent, then silence
      chunk([{ index: 0, delta: { content: part }, finish_reason: null }]);
    }
    if (stallAt !== undefined) return;
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]);
    // Like the real API: usage only when asked for, in a last chunk with no choices.
    if (body?.stream_options?.include_usage === true) chunk([], { usage });
    res.write("data: [DONE]\n\n");
    res.end();
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      const path = (req.url ?? "").split("?")[0] ?? "";
      const record: RecordedRequest = { method: req.method ?? "", path, headers: req.headers, body };
      requests.push(record);
      if (path.endsWith("/models")) {
        sendJson(res, 200, { object: "list", data: [{ id: "mock-model", object: "model", owned_by: "mock" }] });
        return;
      }
      if (!path.endsWith("/chat/completions")) {
        sendJson(res, 404, { error: { message: `mock: unknown path ${path}`, type: "not_found" } });
        return;
      }
      const step = queue.shift() ?? p.defaultStep ?? {};
      record.step = step;
      if (step.delayMs) later(step.delayMs, res, () => answerChat(res, body, step));
      else answerChat(res, body, step);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests: () => requests.filter((r) => r.path.endsWith("/chat/completions")),
    enqueue: (...steps) => void queue.push(...steps),
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
