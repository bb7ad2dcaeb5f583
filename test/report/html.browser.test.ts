// The replay report in a real headless Chromium (Debian's `chromium`, driven by playwright-core):
// a 20,000-line page renders without a console error, the picture's parts exist, clicking a
// dispatch shows its decision, no log line runs as script, and a screenshot is saved.
// Skips — saying so — only where /usr/bin/chromium is absent outside CI; under CI that is a failure.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderHtmlReport } from "../../src/report/html.ts";
import { bigLog, replayFor } from "./helpers.ts";

// The page's own function, used inside evaluate() callbacks (this project compiles without the DOM library).
declare const getComputedStyle: (e: unknown) => { backgroundColor: string; stroke: string };

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
// Where CI runs (it installs Chromium first), a missing browser fails this file; it never skips there.
const inCi = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false";
if (!hasChromium && inCi) throw new Error(`${CHROMIUM} is missing where CI runs: .ci/run installs it with apt-get`);
if (!hasChromium) console.warn(`SKIPPED html.browser.test.ts: no Chromium at ${CHROMIUM} (apt-get update && apt-get install -y chromium)`);

describe.skipIf(!hasChromium)(`replay --html in headless Chromium (${hasChromium ? CHROMIUM : `skipped: ${CHROMIUM} not installed`})`, () => {
  let dir: string;
  let page: string;
  let browser: BrowserContext;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "acp-report-browser-"));
    const lines = bigLog(20_000);
    const report = await replayFor(lines);
    page = join(dir, "report.html");
    writeFileSync(page, renderHtmlReport({ report, lines, persona: "jacob_", source: "big.jsonl" }));
    // A fresh profile directory (playwright passes it as --user-data-dir).
    browser = await chromium.launchPersistentContext(join(dir, "profile"), {
      executablePath: CHROMIUM,
      viewport: { width: 1400, height: 900 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("renders with no console error or request, shows a dispatch's decision on click, runs no log text, saves a screenshot", async () => {
    const tab = await browser.newPage();
    const problems: string[] = [];
    const requests: string[] = [];
    let dialogs = 0;
    tab.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
    });
    tab.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    tab.on("dialog", (d) => {
      dialogs++;
      void d.dismiss();
    });
    tab.on("request", (r) => {
      if (!r.url().startsWith("file:")) requests.push(r.url());
    });

    const started = Date.now();
    await tab.goto(pathToFileURL(page).href, { waitUntil: "load", timeout: 60_000 });
    await tab.waitForSelector("body[data-ready='1']", { timeout: 60_000 });
    const renderMs = Date.now() - started;
    console.log(`report page (20,000 lines) rendered in ${renderMs} ms`);

    expect(await tab.locator("#chart circle.d").count()).toBeGreaterThan(100);
    expect(await tab.locator("#chart .vitality rect").count()).toBeGreaterThan(1);
    expect(await tab.locator("#chart .budget polyline").count()).toBe(2);
    expect(await tab.locator("#chart rect.reply").count()).toBeGreaterThan(0);
    expect(await tab.locator("#chart .addressed path").count()).toBe(2);
    expect(await tab.locator("#hours tbody tr").count()).toBeGreaterThan(3);
    await expect.poll(() => tab.locator("#detail").innerText()).toContain("Hover or click a dispatch marker");

    // Hovering a dispatch shows its decision.
    await tab.locator("#chart circle.d.normal").nth(3).dispatchEvent("mouseover");
    expect(await tab.locator("#detail h3").innerText()).toMatch(/^dispatch 4 · 2010-08-17 \d\d:\d\d:\d\d UTC$/);
    expect(await tab.locator("#detail").innerText()).toMatch(/trigger\s+normal/);

    // Click the first mention dispatch that sent a reply: its decision and carried messages appear.
    const marker = tab.locator("#chart circle.d.mention.sent").first();
    await marker.scrollIntoViewIfNeeded();
    // Markers overlap on a dense day: the event goes to this marker itself, not to whatever is on top.
    await marker.dispatchEvent("click");
    const detail = await tab.locator("#detail").innerText();
    expect(detail).toMatch(/trigger\s+mention/);
    expect(detail).toMatch(/decision\s+sent \w+/);
    expect(await tab.locator("#detail .carried li").count()).toBeGreaterThan(0);
    // Each carried message is shown with its sender's name, as the page data has it for that line.
    const who = await tab.locator("#detail .carried li .who").first().innerText();
    const senders = (JSON.parse((await tab.locator("#report-data").textContent())!) as { msgs: { s: string[] } }).msgs.s;
    expect(who).not.toBe("");
    expect(senders).toContain(who);
    expect(await tab.locator("#highlight .hl-msg").count()).toBeGreaterThan(0);

    // One colour per meaning, as Chromium computes them: every legend swatch differs from the
    // others, except that a mention refused for budget is an addressed line missed, the alarm.
    const swatches = await tab.locator("#legend [data-mark] i").evaluateAll((els) =>
      els.filter((e) => !e.classList.contains("k-full") && !e.classList.contains("k-over-addressed")).map((e) => `${e.className}=${getComputedStyle(e).backgroundColor}`),
    );
    expect(swatches.length).toBeGreaterThan(15);
    const colours = swatches.map((sw) => sw.split("=")[1]);
    expect(new Set(colours).size, swatches.join(" ")).toBe(colours.length);
    // Budget skips of unaddressed talk are not drawn in the alarm colour (a refused mention is).
    const stroke = (sel: string) => tab.locator(sel).first().evaluate((e) => getComputedStyle(e).stroke);
    const alarm = await stroke("#chart .budget path.over-addressed");
    const missed = await stroke("#chart .addressed path.missed");
    expect(alarm).toBe(missed);
    expect(await stroke("#chart .budget path.over-unaddressed")).not.toBe(alarm);
    expect(await stroke("#chart .budget line.full")).not.toBe(alarm);
    expect(await stroke("#chart .budget line.full")).not.toBe(await stroke("#chart .messages path.m-mention"));

    // The reply text with `</script><script>alert(1)</script>` is shown as text, never run.
    expect(await tab.locator("#detail blockquote.reply").innerText()).toContain("</script><script>alert(1)</script>");
    expect(dialogs).toBe(0);
    expect(problems).toEqual([]);
    expect(requests).toEqual([]);

    // Kept after the run (outside the removed temp dir) for a look.
    const shot = join(tmpdir(), "acp-group-replay-report.png");
    await tab.screenshot({ path: shot });
    expect(existsSync(shot)).toBe(true);
    console.log(`screenshot: ${shot}`);
    await tab.close();
  }, 120_000);
});
