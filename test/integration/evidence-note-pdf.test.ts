/**
 * The HTML incident note in a real Chromium: every section renders, nothing is fetched, it fits
 * an A4 page's width, and it prints to PDF with every section present (as PDF bookmarks). The
 * PDF and a PNG of the printed page are kept under test-results/notes/ to be looked at.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTE_SECTIONS } from '../../electron/engine/evidence/note/model.ts';
import { cli, signedRun, type SignedRun } from '../support/evidenceRun.ts';

const OUT = resolve(import.meta.dirname, '../../test-results/notes');
let s: SignedRun;
let browser: Browser;

beforeAll(async () => {
  s = await signedRun('ev_pdf', 'bf-note-pdf');
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
  await s?.db.drop();
});

/** The bookmark titles of a Chromium PDF (`outline: true`): literal strings of its outline objects. */
const outlineTitles = (pdf: Buffer) => [...pdf.toString('latin1').matchAll(/\/Title \(((?:[^()\\]|\\.)*)\)\s*\/Dest/g)].map((m) => m[1]);

describe('the HTML incident note', () => {
  it('renders every section in Chromium and prints to a PDF that has them all', async () => {
    const html = join(s.ws.dir, 'note.html');
    await cli(s.ws, [
      'export',
      '--run-id',
      s.runId,
      '--format',
      'html',
      '--out',
      html,
      '--identity',
      'bob',
      '--passphrase-env',
      'BACKFILL_TEST_PASSPHRASE',
    ]);
    const page = await browser.newPage({ viewport: { width: 794, height: 1123 } }); // A4 at 96 dpi
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(pathToFileURL(html).href);
    await page.emulateMedia({ media: 'print' });

    expect(await page.locator('h2').allTextContents()).toEqual([...NOTE_SECTIONS]);
    expect(await page.locator('h1').textContent()).toBe(`Incident note — backfill ${s.runId}`);
    expect(await page.locator('.verdict').textContent()).toBe('Intact at export, head signed.');
    // Five uniform partitions summarised in one row (exceptions would come first).
    expect(await page.locator('section:has(h2:text("Partitions")) tbody tr').allTextContents()).toEqual([
      expect.stringMatching(/^5 partitions, 2026-05-01 … 2026-05-05published1/),
    ]);
    expect(await page.locator('dt:text("Signed off by") + dd').textContent()).toMatch(/^alice \(lead\) at /);
    // The change by key, with its charts drawn as inline SVG, and the lead's words.
    expect(await page.locator('section:has(h2:text("What changed")) figure.chart svg').count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator('blockquote.comment').first().textContent()).toContain('impact checked: 5 days of billing data');
    // Self-contained: the page itself is the only thing loaded.
    expect(requests).toEqual([pathToFileURL(html).href]);
    // Fits the printable width of A4: nothing is cut off on paper.
    expect(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);

    const pdf = await page.pdf({ format: 'A4', printBackground: true, outline: true, tagged: true });
    mkdirSync(OUT, { recursive: true });
    writeFileSync(join(OUT, 'incident-note.pdf'), pdf);
    await page.screenshot({ path: join(OUT, 'incident-note.png'), fullPage: true });
    await page.close();

    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdf.toString('latin1').match(/\/Type \/Page\b/g)?.length ?? 0).toBeGreaterThanOrEqual(1);
    expect(outlineTitles(pdf)).toEqual(expect.arrayContaining([...NOTE_SECTIONS]));
  });
});
