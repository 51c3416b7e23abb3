import { describe, expect, test } from 'vitest';
import { readHeader } from '../../src/import/columns.js';
import { PRIVATE_WORDS, isPrivateColumn, nameHints } from '../../src/import/reading.js';
import {
  readAvailability, readCurrency, readEdition, readMeasure, readPrice, readYear, readYesNo,
} from '../../src/import/values.js';
import { FileProblem } from '../../src/import/problem.js';
import { cpuMs } from '../support/cpu.js';

const mapping = (columns: string[], options = {}) => readHeader(columns, 'artworks', options).mapping;

describe('column names in six languages', () => {
  test.each([
    ['Titel', 'title'], ['Titre', 'title'], ['Titolo', 'title'], ['Título', 'title'], ['Werktitel', 'title'], ['Artwork title', 'title'],
    ['Künstler', 'artist_name'], ['Artiste', 'artist_name'], ['Artista', 'artist_name'], ['Kunstenaar', 'artist_name'], ['Maker', 'artist_name'],
    ['Vorname', 'artist_first_name'], ['Prénom', 'artist_first_name'], ['Surname', 'artist_last_name'], ['Nachname', 'artist_last_name'],
    ['Cognome', 'artist_last_name'], ['Apellido', 'artist_last_name'],
    ['Year', 'creation_year'], ['Jahr', 'creation_year'], ['Année', 'creation_year'], ['Anno', 'creation_year'], ['Año', 'creation_year'],
    ['Jaar', 'creation_year'], ['Datierung', 'creation_year'],
    ['Technique', 'medium'], ['Technik', 'medium'], ['Materials', 'medium'], ['Técnica', 'medium'], ['Techniek', 'medium'],
    ['Maße', 'dimensions'], ['Abmessungen', 'dimensions'], ['Taille', 'dimensions'], ['Misure', 'dimensions'], ['Medidas', 'dimensions'],
    ['Afmetingen', 'dimensions'], ['Dimensions (cm)', 'dimensions'],
    ['Höhe', 'height'], ['Breite', 'width'], ['Tiefe', 'depth'], ['Hauteur', 'height'], ['Larghezza', 'width'], ['Profundidad', 'depth'],
    ['H', 'height'], ['W', 'width'], ['D', 'depth'], ['Height (in)', 'height'], ['Einheit', 'dimension_unit'],
    ['Retail price', 'price'], ['Verkaufspreis', 'price'], ['Prix', 'price'], ['Prezzo', 'price'], ['Precio', 'price'], ['Prijs', 'price'],
    ['Price (EUR)', 'price'], ['Preis in €', 'price'],
    ['Währung', 'currency'], ['Devise', 'currency'], ['Valuta', 'currency'], ['Moneda', 'currency'],
    ['Status', 'availability'], ['Verfügbarkeit', 'availability'], ['Disponibilité', 'availability'], ['Beschikbaarheid', 'availability'],
    ['Stock number', 'external_id'], ['Stock #', 'external_id'], ['Inv.-Nr.', 'external_id'], ['Inventarnummer', 'external_id'],
    ["N° d'inventaire", 'external_id'], ["Numéro d'inventaire", 'external_id'], ['Numero di inventario', 'external_id'],
    ['Número de inventario', 'external_id'], ['SKU', 'external_id'], ['Werknummer', 'external_id'],
    ['Edition', 'edition'], ['Auflage', 'edition'], ['Tirage', 'edition'], ['Edizione', 'edition'], ['Oplage', 'edition'],
    ['Price on request', 'price_on_request'], ['POA', 'price_on_request'], ['P.O.R.', 'price_on_request'], ['Preis auf Anfrage', 'price_on_request'],
    ['Prix sur demande', 'price_on_request'], ['Prezzo su richiesta', 'price_on_request'], ['Precio a consultar', 'price_on_request'],
    ['Hide price', 'price_hidden'], ['Preis verbergen', 'price_hidden'],
    ['Image URL', 'image_url'], ['Bild', 'image_url'], ['Immagine', 'image_url'], ['Afbeelding', 'image_url'],
    ['Beschreibung', 'description'], ['Descriptif', 'description'], ['Descripción', 'description'], ['Alt text', 'image_alt'],
  ])('"%s" is read as %s', (column, field) => {
    expect(mapping(field === 'title' ? [column] : ['title', column])[column]).toBe(field);
  });

  test('a phrase is matched before its words: "Prix sur demande" is price on request, "Prix" price', () => {
    expect(mapping(['Titre', 'Prix', 'Prix sur demande'])).toEqual({ Titre: 'title', Prix: 'price', 'Prix sur demande': 'price_on_request' });
  });

  test('a column named exactly as a field always maps, even beside words for it', () => {
    expect(mapping(['title', 'Titel', 'price'])).toEqual({ title: 'title', Titel: null, price: 'price' });
  });

  test('two columns for one field: neither is applied, both are listed; the one named exactly as the word wins', () => {
    const read = readHeader(['Title', 'Retail price', 'Sale price'], 'artworks');
    expect(read.mapping).toEqual({ Title: 'title', 'Retail price': null, 'Sale price': null });
    expect(read.unmapped).toEqual(['Retail price', 'Sale price']);
    expect(mapping(['Title', 'Price', 'Retail price'])).toEqual({ Title: 'title', Price: 'price', 'Retail price': null });
  });

  test('a private word blocks every suggestion, whatever else the name says', () => {
    const columns = ['Title', 'Cost price', 'Consignor', 'Buyer name', 'Notes', 'Location', 'Insurance value', 'EK-Preis', 'Prix d\'achat',
      'Prezzo acquisto', 'Net price', 'Internal notes', 'Private title', 'Margin'];
    const read = readHeader(columns, 'artworks');
    expect(read.unmapped).toEqual(columns.slice(1));
    expect(PRIVATE_WORDS.length).toBeGreaterThan(30);
    // German writes its purchase price in one word: private, as "EK-Preis" is.
    expect(['Einkaufspreis', 'EK-Preis', 'Verkaufspreis'].map(isPrivateColumn)).toEqual([true, true, false]);
  });

  test('a mapped column wins over suggestions; --no-suggest reads only exact names; --strict refuses a column left out', () => {
    expect(mapping(['Titel', 'Cost'], { map: new Map([['cost', 'price']]) })).toEqual({ Titel: 'title', Cost: 'price' });
    expect(() => readHeader(['Titel'], 'artworks', { suggest: false })).toThrow(FileProblem);
    expect(() => readHeader(['title', 'Künstler'], 'artworks', { strict: true })).not.toThrow();
    expect(() => readHeader(['title', 'Cost'], 'artworks', { strict: true })).toThrow(/unknown column "Cost"/);
  });

  test('units and currencies in a name', () => {
    expect(nameHints('Dimensions (cm)').hints).toEqual({ unit: 'cm' });
    expect(nameHints('Height (in)').hints).toEqual({ unit: 'in' });
    expect(nameHints('Price (EUR)').hints).toEqual({ currency: 'EUR' });
    expect(nameHints('Preis in €').hints).toEqual({ currency: 'EUR' });
    expect(nameHints('Prix £').hints).toEqual({ currency: 'GBP' });
  });

  test('events keep exact names and their earlier suggestions', () => {
    expect(readHeader(['Name', 'Start', 'Künstler'], 'events').mapping).toEqual({ Name: 'title', Start: 'start_date', Künstler: null });
  });

  test('bounded: a 200-column header holding every word is read at once', async () => {
    const words = 'title artist künstler year jahr price prix preis edition auflage stock inventory cost consignor notes'.split(' ');
    const columns = Array.from({ length: 200 }, (_, i) => `${words.join(' ')} ${i}`.slice(0, 200));
    const { ms } = await cpuMs(() => expect(() => readHeader(columns, 'artworks')).toThrow(/no title column/));
    expect(ms).toBeLessThan(200);
  });
});

describe('prices as galleries write them', () => {
  test.each([
    ['12500', 12500, undefined], ['12,500', 12500, undefined], ['12.500', 12500, undefined], ['12 500', 12500, undefined],
    ['12\u00a0500', 12500, undefined], ['12\u202f500', 12500, undefined], ['12.500,00', 12500, undefined], ['12,500.00', 12500, undefined],
    ['1.234.567', 1234567, undefined], ['€ 12.500', 12500, 'EUR'], ['12.500 €', 12500, 'EUR'], ['$12,500', 12500, 'USD'], ['£8,000', 8000, 'GBP'],
    ['CHF 12\'500.-', 12500, 'CHF'], ['12,500 USD', 12500, 'USD'], ['EUR 12.500,-', 12500, 'EUR'], ['12500 EUR', 12500, 'EUR'],
  ])('%s → %d %s', (cell, amount, currency) => {
    expect(readPrice(cell)).toEqual({ value: currency ? { amount, currency } : { amount } });
  });

  test('$ is US dollars unless the default currency is another dollar', () => {
    expect(readPrice('$ 900', 'CAD')).toEqual({ value: { amount: 900, currency: 'CAD' } });
    expect(readPrice('$ 900', 'EUR')).toEqual({ value: { amount: 900, currency: 'USD' } });
  });

  test.each([
    ['12,50', /"12,50" is not a whole price.*write 12 or 13/],
    ['1.250,50 €', /"1.250,50 €" is not a whole price.*write 1250 or 1251/],
    ['12.5', /not a whole price/],
    ['€ 12 $', /two currencies/],
    ['99999999999999999', /larger than any price/],
  ])('%s is refused with the form that would be accepted', (cell, message) => {
    const read = readPrice(cell);
    expect(read && 'problem' in read ? read.problem : read).toMatch(message);
  });

  test.each(['12,5000', '1,2,3', '12.500.00', 'twelve', 'ABC 12', '12,500,00', '-12'])('%s is no price form', (cell) => {
    expect(readPrice(cell)).toBeUndefined();
  });

  test('a 1 MB cell is refused at once, quoting 100 characters', () => {
    const read = readPrice('1'.repeat(1024 * 1024));
    expect(read && 'problem' in read && read.problem.length).toBeLessThan(150);
  });

  test('currency cells', () => {
    expect(readCurrency('€')).toEqual({ value: 'EUR' });
    expect(readCurrency('chf')).toEqual({ value: 'CHF' });
    expect(readCurrency('$', 'AUD')).toEqual({ value: 'AUD' });
    expect(readCurrency('euros')).toBeUndefined();
  });
});

describe('words', () => {
  test.each(['yes', 'Y', 'x', 'TRUE', '1', 'ja', 'Oui', 'sì', 'si', 'sí', 'wel'])('%s is yes', (cell) => expect(readYesNo(cell)).toEqual({ value: true }));
  test.each(['', 'no', 'N', 'false', '0', 'nein', 'non', 'nee'])('"%s" is no', (cell) => expect(readYesNo(cell)).toEqual({ value: false }));
  test.each(['maybe', 'yes please', 'x'.repeat(1024 * 1024)])('"%s" is refused', (cell) => {
    const read = readYesNo(cell);
    expect('problem' in read && read.problem.length).toBeLessThan(160);
  });

  test.each([
    ['available', 'available'], ['For sale', 'available'], ['verfügbar', 'available'], ['Disponible', 'available'], ['disponibile', 'available'],
    ['beschikbaar', 'available'], ['sold', 'sold'], ['Verkauft', 'sold'], ['vendu', 'sold'], ['venduto', 'sold'], ['vendido', 'sold'],
    ['verkocht', 'sold'], ['reserved', 'reserved'], ['on hold', 'reserved'], ['Hold', 'reserved'], ['reserviert', 'reserved'],
    ['réservé', 'reserved'], ['riservato', 'reserved'], ['reservado', 'reserved'], ['gereserveerd', 'reserved'],
    ['Not for sale', 'not_for_sale'], ['NFS', 'not_for_sale'], ['on loan', 'not_for_sale'], ['Private collection', 'not_for_sale'],
    ['unverkäuflich', 'not_for_sale'], ['nicht verkäuflich', 'not_for_sale'], ['pas à vendre', 'not_for_sale'],
    ['non in vendita', 'not_for_sale'], ['no está a la venta', 'not_for_sale'], ['niet te koop', 'not_for_sale'],
  ])('availability %s → %s', (cell, value) => expect(readAvailability(cell)).toEqual({ value }));
  test.each(['not available', 'soon', 'sold out?'])('availability "%s" matches nothing', (cell) => {
    expect(readAvailability(cell)).toHaveProperty('problem');
  });
});

describe('years, editions, measures', () => {
  test.each(['1990', 'c. 1990', 'ca. 1990', 'circa 1990', 'um 1990', 'vers 1990', '1990-92', '1990–1992', '1990/91', 'C.1990'])('%s → 1990', (cell) => {
    expect(readYear(cell)).toEqual({ value: 1990 });
  });
  test.each(['nineties', '1990s?', 'c.', '19900-1'])('year "%s" is refused', (cell) => expect(readYear(cell)).toHaveProperty('problem'));

  test.each([
    ['3/50', { edition_number: 3, edition_size: 50 }], ['3 / 50', { edition_number: 3, edition_size: 50 }],
    ['ed. 3/50', { edition_number: 3, edition_size: 50 }], ['Ed. 3 of 50', { edition_number: 3, edition_size: 50 }],
    ['3/50 + 5 AP', { edition_number: 3, edition_size: 50, artist_proofs: 5 }], ['edition of 50', { edition_size: 50 }],
    ['Auflage 50', { edition_size: 50 }], ['édition de 50', { edition_size: 50 }], ['edizione di 50', { edition_size: 50 }],
    ['edición de 50', { edition_size: 50 }], ['oplage 50', { edition_size: 50 }], ['edition of 50 + 5 AP', { edition_size: 50, artist_proofs: 5 }],
    ['unique', {}], ['Unikat', {}], ['pièce unique', {}], ['unico', {}],
  ])('edition %s', (cell, value) => expect(readEdition(cell)).toEqual({ value }));
  test.each(['50', '51/50', '0/50', 'some', '3/50 + AP'])('edition "%s" is refused', (cell) => expect(readEdition(cell)).toHaveProperty('problem'));

  test('measures', () => {
    expect(readMeasure('30,5')).toEqual({ value: { value: 30.5 } });
    expect(readMeasure('30 cm')).toEqual({ value: { value: 30, unit: 'cm' } });
    expect(readMeasure('thirty')).toBeUndefined();
  });
});
