import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, test } from 'vitest';
import { client, tenant, type Tenant } from '../helpers.js';
import { checkPage, consolePage, describeInBrowser, inBrowser } from '../support/browser.js';
import { workbook } from '../support/spreadsheets.js';

/** The Import page walked as a person would, in Debian's Chromium, with axe-core on every step. */

const README_SHOTS = new Set(['console-import-columns-1280', 'console-import-preview-390']);

/** A gallery's messy export: Windows-1252, semicolons, German and mixed-case headers, a notes column. */
const LATIN1_CSV = Buffer.from([
  'TITLE;artist name;Jahr;Inventar-Nr.;Price;Notiz',
  'Mädchen am Fenster;Käthe Kollwitz;1912;KK-12;4500;gerahmt',
  'Straße im Regen;Günther Förg;1989;GF-89;"12.500,00 €";',
  'Café Noir;Françoise Gilot;1950;FG-50;3200;signiert',
].join('\r\n').replace('€', '\x80'), 'latin1');

describeInBrowser('the Import page in a real browser', { timeout: 180_000 }, () => {
  const web = inBrowser({ publicBaseUrl: true });
  let gallery: Tenant;

  beforeAll(async () => {
    gallery = await tenant(web.t, { name: 'Galerie Süd' });
  });

  const signIn = (width: number) => consolePage(web, gallery.entityId, 'editor', width, 'Import');

  for (const width of [1280, 390]) {
    test(`at ${width} px an editor uploads a Latin-1 semicolon CSV, chooses the encoding, maps two columns, reads the preview, applies and sees the summary and the new records`, async () => {
      const page = await signIn(width);
      await checkPage(page, `console-import-upload-${width}`, README_SHOTS);
      await page.getByLabel('Artworks').check();
      await page.getByLabel('File').setInputFiles({ name: 'Bestand.csv', mimeType: 'text/csv', buffer: LATIN1_CSV });
      await page.getByRole('button', { name: 'Upload' }).click();

      await expect(page.locator('h1').textContent()).resolves.toBe('Which encoding?');
      await expect(page.locator('.sample').textContent()).resolves.toContain('Mädchen am Fenster;Käthe Kollwitz');
      await checkPage(page);
      await page.getByLabel('Windows-1252 / Latin-1').check();
      await page.getByRole('button', { name: 'Continue' }).click();

      await expect(page.locator('h1').textContent()).resolves.toBe('Match the columns');
      // Suggestions are preselected, in the gallery's words (Jahr, Inventar-Nr.); Notiz is private and left out.
      await expect(page.getByLabel('Field for TITLE').inputValue()).resolves.toBe('title');
      await expect(page.getByLabel('Field for artist name').inputValue()).resolves.toBe('artist_name');
      await expect(page.getByLabel('Field for Jahr').inputValue()).resolves.toBe('creation_year');
      await expect(page.getByLabel('Field for Inventar-Nr.').inputValue()).resolves.toBe('external_id');
      await expect(page.getByLabel('Field for Notiz').inputValue()).resolves.toBe('');
      await checkPage(page, `console-import-columns-${width}`, README_SHOTS);
      await page.getByRole('button', { name: 'Preview' }).click();

      await expect(page.locator('h1').textContent()).resolves.toBe('Preview');
      // "12.500,00 €" is read as the gallery wrote it: no row fails.
      const created = width === 1280 ? 3 : 0;
      await expect(page.locator('#import-summary').textContent()).resolves.toBe(
        `dry run, nothing written: 3 rows: would create ${created}, update 0, leave unchanged ${3 - created}, duplicate 0, failed 0`);
      await checkPage(page, `console-import-preview-${width}`, README_SHOTS);
      await page.getByRole('button', { name: 'Apply' }).click();

      await page.locator('h1', { hasText: 'Import done' }).waitFor({ timeout: 30_000 });
      await expect(page.locator('#import-summary').textContent()).resolves.toContain(`3 rows: created ${created}, updated 0, unchanged ${3 - created}, duplicate 0, failed 0`);
      await checkPage(page, `console-import-done-${width}`, README_SHOTS);
      await page.getByRole('link', { name: 'See the artworks' }).click();
      await expect(page.getByRole('link', { name: 'Mädchen am Fenster' }).count()).resolves.toBe(1);
      await expect(page.getByRole('link', { name: 'Café Noir' }).count()).resolves.toBe(1);
      await page.close();
    });
  }

  for (const width of [1280, 390]) {
    test(`at ${width} px a German sheet's columns are matched in the gallery's words, its purchase price left out`, async () => {
      const page = await signIn(width);
      const sheet = ['Künstler,Titel,Preis (EUR),Verfügbarkeit,Einkaufspreis', 'Gabriele Münter,Dorfstraße,12.500,verfügbar,6100', 'Alexej Jawlensky,Variation,9800,unverkäuflich,4000'].join('\n');
      await page.getByLabel('Artworks').check();
      await page.getByLabel('File').setInputFiles({ name: 'Bestand-de.csv', mimeType: 'text/csv', buffer: Buffer.from(sheet) });
      await page.getByRole('button', { name: 'Upload' }).click();
      await expect(page.locator('h1').textContent()).resolves.toBe('Match the columns');
      // Each suggestion is preselected and shown by its label, never its code; the purchase price is the gallery's private books.
      const chosen = async (column: string) => page.getByLabel(`Field for ${column}`).locator('option:checked').textContent();
      await expect(chosen('Künstler')).resolves.toBe('Artist');
      await expect(chosen('Titel')).resolves.toBe('Title');
      await expect(chosen('Preis (EUR)')).resolves.toBe('Price');
      await expect(chosen('Verfügbarkeit')).resolves.toBe('Availability');
      await expect(chosen('Einkaufspreis')).resolves.toBe('Leave out');
      await expect(page.getByLabel('Field for Einkaufspreis').inputValue()).resolves.toBe('');
      // What a column's name says is said beside it: the currency its prices are in, or that it is private.
      const row = (column: string) => page.getByRole('row').filter({ has: page.getByText(column, { exact: true }) });
      await expect(row('Preis (EUR)').textContent()).resolves.toContain('Read as prices in EUR');
      await expect(row('Einkaufspreis').textContent()).resolves.toContain('Private: never filled by a suggestion');
      await checkPage(page, `console-import-columns-de-${width}`);
      // Nothing sits off-screen behind a sideways scroll.
      await expect(page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).resolves.toBeLessThanOrEqual(0);
      await page.close();
    });
  }

  test('an .xlsx saved by LibreOffice Calc is uploaded, its columns suggested, applied, and its records listed', async () => {
    const page = await signIn(1280);
    await page.getByLabel('File').setInputFiles({ name: 'gallery-stock.xlsx', mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', buffer: readFileSync(join(import.meta.dirname, '..', 'fixtures', 'gallery-stock.xlsx')) });
    await page.getByRole('button', { name: 'Upload' }).click();
    await expect(page.getByLabel('Field for Inventory No.').inputValue()).resolves.toBe('external_id');
    await expect(page.getByLabel('Field for Artist').inputValue()).resolves.toBe('artist_name');
    await expect(page.getByLabel('Field for Year').inputValue()).resolves.toBe('creation_year');
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect(page.locator('#import-summary').textContent()).resolves.toBe('dry run, nothing written: 3 rows: would create 3, update 0, leave unchanged 0, duplicate 0, failed 0');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.locator('h1', { hasText: 'Import done' }).waitFor({ timeout: 30_000 });
    const { artworks } = (await client(web.t, gallery.key).get('/v1/artworks?limit=100')).body;
    expect(artworks.filter((a: any) => a.external_id?.startsWith('LO-')).map((a: any) => [a.title, a.price])).toEqual([['Morning Field', 4800], ['Evening Field', 5200], ['Salt Marsh', 3100]]);
    await page.close();
  });

  test('at 390 px a workbook of several sheets asks which sheet to read, and the one chosen is matched', async () => {
    const page = await signIn(390);
    const bytes = await workbook({ Notes: [['Kept by the registrar']], 'Stock 2026': [['Title', 'Artist', 'Inventory No.'], ['Tidal Study', 'Mira Holm', 'TS-1']] });
    await page.getByLabel('File').setInputFiles({ name: 'stock.xlsx', mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', buffer: bytes });
    await page.getByRole('button', { name: 'Upload' }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('Which sheet?');
    await checkPage(page, 'console-import-sheet-390', README_SHOTS);
    // A short page's spare height goes below the form: the nav stays as tall as its links.
    expect((await page.locator('.console-nav').boundingBox())!.height).toBeLessThan(160);
    await expect(page.getByLabel('Notes').isChecked()).resolves.toBe(true);
    await page.getByLabel('Stock 2026').check();
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('Match the columns');
    await expect(page.getByLabel('Field for Inventory No.').inputValue()).resolves.toBe('external_id');
    await page.close();
  });
});
