import { describe, expect, test } from 'vitest';
import { artworkFromPost } from '../../src/domain/artwork.js';
import { changedFields, listShows } from '../../src/import/plan.js';
import { checkRow, formatProblem, isPriceOnRequest, tableRows } from '../../src/import/rows.js';
import { readTable } from '../../src/import/table.js';

/**
 * The import reader (push, the console's import, feeds) and the art data (docs/api.md, Import): the
 * words for "price on request", measures, editions, more views in image_url_2 … columns or in one cell.
 */

async function rows(csv: string) {
  const table = await readTable(Buffer.from(csv), { name: 'works.csv' });
  return tableRows(table, 'artworks');
}

describe('price on request in a price column', () => {
  test.each(['POA', 'P.O.R.', 'price on request', 'On Request', 'auf Anfrage', 'sur demande', 'su richiesta', 'a consultar', ' poa '])(
    '%j is on_request with no price', async (word) => {
      expect(isPriceOnRequest(word)).toBe(true);
      const [row] = await rows(`title,price,currency\nA work,${word},EUR\n`);
      expect(row!.body).toEqual({ title: 'A work', price_display: 'on_request', currency: 'EUR' });
      expect(row!.problems).toEqual([]);
      expect(checkRow('artworks', row!.body)).toEqual([]);
    },
  );

  test('a number is a price; other words are still refused; a price_display column wins over the word', async () => {
    const [priced, word, both] = await rows('title,price,price_display\nA,12500,\nB,ask us,\nC,POA,hidden\n');
    expect(priced!.body).toEqual({ title: 'A', price: 12500 });
    expect(word!.problems.map(formatProblem).join(' ')).toMatch(/^price: "ask us" in column "price" is not a price/);
    expect(both!.body).toEqual({ title: 'C', price_display: 'hidden' });
  });
});

describe('measures and editions', () => {
  test('height, width and depth with a decimal comma or point, edition numbers as integers; the dimensions text is read when alone', async () => {
    const [measured, written] = await rows('title,height,width,depth,dimension_unit,edition_size,edition_number,artist_proofs,dimensions\n'
      + 'A,"30,5",20.25,4,cm,50,3,5,\nB,,,,,,,,"78 3/4 x 63 in"\n');
    expect(measured!.body).toEqual({ title: 'A', height: 30.5, width: 20.25, depth: 4, dimension_unit: 'cm', edition_size: 50, edition_number: 3, artist_proofs: 5 });
    expect(checkRow('artworks', measured!.body)).toEqual([]);
    expect(artworkFromPost(written!.body as never)).toMatchObject({ height: 78.75, width: 63, depth: null, dimension_unit: 'in' });
  });

  test('a row giving only a dimensions text is compared with the listed record: the measures read from it need no full record', async () => {
    const [row] = await rows('title,dimensions,price\nA,200 x 160 cm,POA\n');
    expect(listShows('artworks', row!.body)).toBe(true);
    const input = artworkFromPost(row!.body as never);
    expect(input).toMatchObject({ height: 200, width: 160, dimension_unit: 'cm' });
    const listed = { id: 1, title: 'A', dimensions: '200 x 160 cm', price: null, price_display: 'on_request', image_url: null };
    expect(changedFields('artworks', listed, input)).toEqual([]);
    expect(changedFields('artworks', { ...listed, price_display: 'shown' }, input)).toEqual(['price_display']);
    const [views] = await rows('title,image_url_2\nA,https://g.example/2.jpg\n');
    expect(listShows('artworks', views!.body)).toBe(false);
  });

  test('an edition number above its size is refused, naming the field', async () => {
    const [row] = await rows('title,edition_size,edition_number\nA,50,51\n');
    expect(checkRow('artworks', row!.body).join(' ')).toMatch(/^edition_number: /);
  });
});

describe('more views', () => {
  test('image_url_2 … columns in their number order, after the extra URLs of the image_url cell, separated by spaces or bars', async () => {
    const [row] = await rows('title,image_url,image_url_3,image_url_2\n'
      + 'A,https://g.example/1.jpg | https://g.example/1b.jpg https://g.example/1c.jpg,https://g.example/3.jpg,https://g.example/2.jpg\n');
    expect(row!.body).toEqual({
      title: 'A', image_url: 'https://g.example/1.jpg',
      additional_images: ['1b', '1c', '2', '3'].map((n) => ({ url: `https://g.example/${n}.jpg` })),
    });
    expect(checkRow('artworks', row!.body)).toEqual([]);
  });

  test('an additional_images cell with several URLs; more than 20 views are refused', async () => {
    const [row] = await rows(`title,additional_images\nA,${Array.from({ length: 21 }, (_, i) => `https://g.example/${i}.jpg`).join('|')}\n`);
    expect((row!.body.additional_images as unknown[]).length).toBe(21);
    expect(checkRow('artworks', row!.body).join(' ')).toMatch(/additional_images/);
  });

  test('a row whose views equal the record\'s (as GET shows them, with each image) is unchanged', async () => {
    const [row] = await rows('title,image_url_2\nA,https://g.example/2.jpg\n');
    const input = artworkFromPost(row!.body as never);
    const record = {
      id: 1, title: 'A', price_display: 'shown',
      additional_images: [{ url: 'https://g.example/2.jpg', caption: null, alt: null, role: null, image: { status: 'ready' } }],
    };
    expect(changedFields('artworks', record, input)).toEqual([]);
    expect(changedFields('artworks', { ...record, additional_images: [] }, input)).toEqual(['additional_images']);
  });
});
