import Type, { type Static } from 'typebox';
import { Nullable, Ref, StringEnum, Timestamp } from './common.js';

/** A derivative's bytes: AVIF, WebP or JPEG, as its name's extension says. */
export const ImageBytes = Type.String({ $id: 'ImageBytes', format: 'binary', description: 'The image: AVIF, WebP or JPEG, as the name\'s extension says.' });

export const ImageParams = Type.Object({
  name: Type.String({
    description: 'A derivative\'s name as the API\'s `image.src` and `image.srcset` give it: the SHA-256 of the original, its width and format, e.g. `9f86…0f00-960.avif`.',
  }),
});

export const IMAGE_STATUSES = ['pending', 'ready', 'failed'] as const;
export const ImageStatus = StringEnum(IMAGE_STATUSES);

const Srcset = (format: string) => Type.String({ description: `Our ${format} copies for a \`srcset\`: "URL 480w, URL 960w, …" (never wider than the original).` });

export const Image = Type.Object({
  status: StringEnum(IMAGE_STATUSES, { description: '`pending` until the service has fetched and checked the image_url; `ready` when our copies are served; `failed` when the last try failed (see `error`; tried again after 1 min, 10 min, 1 h, 6 h, then daily for 7 days).' }),
  width: Nullable(Type.Integer({ minimum: 1, description: 'Of the original (after its EXIF orientation); null until ready.' })),
  height: Nullable(Type.Integer({ minimum: 1 })),
  src: Nullable(Type.String({ format: 'uri', description: 'The platform\'s 960 px JPEG (the largest there is for a narrower original); null until ready.' })),
  srcset: Nullable(Type.Object({ avif: Srcset('AVIF'), webp: Srcset('WebP'), jpeg: Srcset('JPEG') }, { additionalProperties: false })),
  error: Nullable(Type.String({ description: 'Why the last try failed, one line: "HTTP 404", "not an image", "too large: 31 MB", "address not allowed", "timed out", "too many redirects", …' })),
  checked_at: Nullable(Timestamp),
}, {
  $id: 'Image',
  description: 'The platform\'s copy of a record\'s image_url (fetched in the background after each write that sets or changes it).',
  examples: [{
    status: 'ready', width: 3000, height: 2000, src: 'https://art.example/images/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08-960.jpg',
    srcset: {
      avif: 'https://art.example/images/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08-480.avif 480w, https://art.example/images/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08-960.avif 960w, https://art.example/images/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08-1600.avif 1600w',
      webp: 'https://art.example/images/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08-480.webp 480w, https://art.example/images/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08-960.webp 960w, https://art.example/images/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08-1600.webp 1600w',
      jpeg: 'https://art.example/images/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08-480.jpg 480w, https://art.example/images/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08-960.jpg 960w, https://art.example/images/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08-1600.jpg 1600w',
    },
    error: null, checked_at: '2026-11-21T10:15:30.123Z',
  }],
});
export type ImageType = Static<typeof Image>;

/** A record's `image`: null without an image_url. */
export const RecordImage = Type.Union([Ref(Image), Type.Null()], { description: 'null when the record has no image_url.' });

export const ImageCounts = Type.Object({
  pending: Type.Integer({ minimum: 0 }), ready: Type.Integer({ minimum: 0 }), failed: Type.Integer({ minimum: 0 }),
}, { description: 'Records with an image_url, by the state of their image.' });

export const imageStatusQuery = {
  image_status: Type.Optional(StringEnum(IMAGE_STATUSES, { description: 'Only records whose image is in this state.' })),
};
