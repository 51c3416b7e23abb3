import type { ArtworkRow, EntityRow, EventRow } from '../db/types.js';
import { safeHref } from './html.js';
import { countryName } from './format.js';

/**
 * schema.org JSON-LD of the public pages (docs/public-pages.md, Metadata), with the fields those types define that we
 * hold. Absent values are left out rather than written as null.
 */

type Json = Record<string, unknown>;
const CONTEXT = 'https://schema.org';

/** Drops undefined, null and empty-string members (and empty arrays). */
function compact(object: Json): Json {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0)));
}

function address(city: string | null, country: string | null): Json | undefined {
  if (!city && !country) return undefined;
  return compact({ '@type': 'PostalAddress', addressLocality: city, addressCountry: country?.toUpperCase() });
}

/** The entity as a schema.org node: ArtGallery for a gallery, Person for an artist. */
export function entityNode(entity: EntityRow, url: string): Json {
  const sameAs = [entity.external_url, entity.social_instagram, entity.social_twitter].map(safeHref).filter(Boolean);
  const place = address(entity.location_city, entity.location_country);
  return compact(entity.type === 'gallery'
    ? { '@type': 'ArtGallery', name: entity.name, url, description: entity.description, address: place, sameAs }
    : {
      '@type': 'Person', name: entity.name, url, description: entity.description, sameAs, jobTitle: 'Artist',
      homeLocation: place && { '@type': 'Place', address: place },
    });
}

export function profileData(entity: EntityRow, url: string, events: Json[]): Json {
  return { '@context': CONTEXT, ...entityNode(entity, url), ...(events.length ? { [entity.type === 'gallery' ? 'event' : 'performerIn']: events } : {}) };
}

const SCHEMA_AVAILABILITY = { available: 'https://schema.org/InStock', reserved: 'https://schema.org/LimitedAvailability', sold: 'https://schema.org/SoldOut' } as const;

const UNIT_CODES = { cm: 'CMT', mm: 'MMT', in: 'INH' } as const;

/** A measure as schema.org's QuantitativeValue with its UN/CEFACT unit code (docs/api.md, Measured dimensions). */
function measure(value: number | null, unit: ArtworkRow['dimension_unit']): Json | undefined {
  if (value === null || unit === null) return undefined;
  return { '@type': 'QuantitativeValue', value, unitCode: UNIT_CODES[unit], unitText: unit };
}

/**
 * `image`: our copies (the 1600 px JPEG), never the gallery's URL: the main image first, then the
 * ready views. The price only when the gallery shows it (`priceShown`).
 */
export function artworkData(entity: EntityRow, entityUrl: string, artwork: ArtworkRow, url: string, priceShown: boolean, image: string | undefined,
  views: ReadonlyArray<string | undefined> = []): Json {
  const images = [image, ...views].filter((u): u is string => u !== undefined);
  // An offer's price always comes with its currency; a work not for sale has no offer at all (docs/api.md, Price display).
  const priced = priceShown && artwork.price !== null && artwork.currency !== null;
  const forSale = artwork.availability !== 'not_for_sale';
  const offers = forSale && (artwork.availability || priced) ? compact({
    '@type': 'Offer',
    price: priced ? artwork.price : undefined,
    priceCurrency: priced ? artwork.currency : undefined,
    availability: artwork.availability && artwork.availability !== 'not_for_sale' ? SCHEMA_AVAILABILITY[artwork.availability] : undefined,
    url: safeHref(artwork.external_url) ?? url,
    seller: compact({ '@type': entity.type === 'gallery' ? 'ArtGallery' : 'Person', name: entity.name, url: entityUrl }),
  }) : undefined;
  return compact({
    '@context': CONTEXT,
    '@type': 'VisualArtwork',
    name: artwork.title,
    url,
    image: images.length > 1 ? images : images[0],
    description: artwork.description,
    creator: artwork.artist_name ? { '@type': 'Person', name: artwork.artist_name } : undefined,
    dateCreated: artwork.creation_year !== null ? String(artwork.creation_year) : undefined,
    artMedium: artwork.medium,
    size: artwork.dimensions,
    height: measure(artwork.height, artwork.dimension_unit),
    width: measure(artwork.width, artwork.dimension_unit),
    depth: measure(artwork.depth, artwork.dimension_unit),
    // schema.org's artEdition: the number of copies of the edition.
    artEdition: artwork.edition_size ?? undefined,
    sameAs: safeHref(artwork.external_url),
    offers,
  });
}

/** An event node: ExhibitionEvent for exhibitions, Event otherwise; the place defaults to the entity's. */
export function eventNode(entity: EntityRow, entityUrl: string, event: EventRow, url: string, image: string | undefined): Json {
  const city = event.location_city ?? (event.location_country ? null : entity.location_city);
  const country = event.location_country ?? (event.location_city ? null : entity.location_country);
  const place = address(city, country);
  return compact({
    '@type': event.event_type === 'exhibition' ? 'ExhibitionEvent' : 'Event',
    name: event.title,
    url,
    startDate: event.start_date,
    endDate: event.end_date ?? event.start_date,
    description: event.description,
    image,
    sameAs: safeHref(event.external_url),
    eventAttendanceMode: 'https://schema.org/OfflineEventAttendanceMode',
    location: place && compact({ '@type': 'Place', name: [city, countryName(country)].filter(Boolean).join(', ') || entity.name, address: place }),
    organizer: compact({ '@type': entity.type === 'gallery' ? 'ArtGallery' : 'Person', name: entity.name, url: entityUrl }),
  });
}

export const eventData = (entity: EntityRow, entityUrl: string, event: EventRow, url: string, image: string | undefined): Json =>
  ({ '@context': CONTEXT, ...eventNode(entity, entityUrl, event, url, image) });
