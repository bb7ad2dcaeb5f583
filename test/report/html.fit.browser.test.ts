// The room replay's report of a 4.9-hour day (#ubuntu 2010-08-17, three fresh agents, the `helpful`
// stand-in) in a real headless Chromium (Debian's `chromium`, driven by playwright-core) at
// 1,200 × 800 px: the whole timeline fits the window (its last dispatch is on screen, the chart
// does not scroll sideways), a dispatch clicked at the end of the day shows its decision in a
// panel that is on screen, and the room's orphan figures are on the page.
// Skips — saying so — only where /usr/bin/chromium is absent outside CI; under CI that is a failure.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { parseLog } from "../../src/replay/log.ts";
import { runRoomReplay } from "../../src/replay/room.ts";
import { renderHtmlReport } from "../../src/report/html.ts";

// The page's own globals, used inside evaluate() callbacks (this project compiles without the DOM library).
declare const document: { querySelector(s: string): { getBoundingClientRect(): { left: number; right: number; top: number; bottom: number }; scrollWidth: number; clientWidth: number } };
declare const window: { innerWidth: number; innerHeight: number };

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
const inCi = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false";
if (!hasChromium && inCi) throw new Error(`${CHROMIUM} is missing where CI runs: .ci/run installs it with apt-get`);
if (!hasChromium) console.warn(`SKIPPED html.fit.browser.test.ts: no Chromium at ${CHROMIUM} (apt-get update && apt-get install -y chromium)`);

describe.skipIf(!hasChromium)(`the room report fits a 1,200 px window (${hasChromium ? CHROMIUM : `skipped: ${CHROMIUM} not installed`})`, () => {
  let dir: string;
  let page: string;
  let browser: BrowserContext;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "acp-report-fit-"));
    const { lines } = parseLog(readFileSync(new URL("../fixtures/irc-dev/ubuntu-2010-08-17.jsonl", import.meta.url), "utf8"));
    const room = await runRoomReplay(
      lines,
      ["room-agent-a", "room-agent-b", "room-agent-c"].map((persona, i) => ({ persona, settings: DEFAULT_GROUP_SETTINGS, responder: "helpful" as const, seed: 1 + i })),
    );
    const first = room.agents[0]!;
    page = join(dir, "room.html");
    writeFileSync(page, renderHtmlReport({ report: first.report, lines, persona: first.persona, aid: first.aid, source: "ubuntu-2010-08-17.jsonl", room: room.room }));
    browser = await chromium.launchPersistentContext(join(dir, "profile"), {
      executablePath: CHROMIUM,
      viewport: { width: 1200, height: 800 },
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the timeline's last dispatch is on screen without scrolling sideways; a late dispatch's decision shows in a panel on screen", async () => {
    const tab = await browser.newPage();
    const problems: string[] = [];
    tab.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
    });
    tab.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    await tab.goto(pathToFileURL(page).href, { waitUntil: "load", timeout: 60_000 });
    await tab.waitForSelector("body[data-ready='1']", { timeout: 60_000 });

    const scroller = await tab.evaluate(() => {
      const s = document.querySelector("#scroller");
      return { scrollWidth: s.scrollWidth, clientWidth: s.clientWidth };
    });
    expect(scroller.scrollWidth).toBeLessThanOrEqual(scroller.clientWidth + 1);
    const lastMarker = tab.locator("#chart circle.d").last();
    const box = await lastMarker.evaluate((e: unknown) => (e as { getBoundingClientRect(): { left: number; right: number } }).getBoundingClientRect());
    const view = await tab.evaluate(() => ({ width: window.innerWidth, height: window.innerHeight }));
    expect(box.right).toBeLessThanOrEqual(view.width);
    expect(box.left).toBeGreaterThan(view.width / 2);

    // Click a dispatch of the day's last hour: the decision panel is on screen, not below the fold.
    await lastMarker.dispatchEvent("click");
    await expect.poll(() => tab.locator("#detail").innerText()).toMatch(/trigger\s+\w+/);
    const panel = await tab.evaluate(() => document.querySelector("#detail").getBoundingClientRect());
    expect(panel.top).toBeLessThan(view.height);
    expect(panel.bottom).toBeLessThanOrEqual(view.height + 1);
    expect(panel.top).toBeGreaterThanOrEqual(0);

    // It was drawn wider than the view (4.9 h at 4 px a minute, beside 170 px of sender labels)
    // and is fitted to the view along the time axis.
    expect(await tab.locator("#chart").evaluate((e: unknown) => (e as { viewBox: { baseVal: { width: number } } }).viewBox.baseVal.width)).toBeGreaterThan(scroller.clientWidth);

    // The room's orphan figures.
    expect(await tab.locator("#room").innerText()).toMatch(/orphaned: answered once within 3 min/);
    expect(problems).toEqual([]);
    await tab.close();
  }, 120_000);
});
