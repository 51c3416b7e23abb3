import type { ImageStatus } from '../db/types.js';
import type { ImageState, StoredDerivative } from '../store/images.js';

/** The API's `image` (docs/api.md, Images). */
export interface ImageView {
  status: ImageStatus;
  width: number | null;
  height: number | null;
  /** The 960 px JPEG (or the largest there is, for a smaller original). */
  src: string | null;
  srcset: { avif: string; webp: string; jpeg: string } | null;
  error: string | null;
  checked_at: string | null;
}

/** The width `src` names: wide enough for most layouts, far lighter than the 1600 px copy. */
export const SRC_WIDTH = 960;
/** The copy Open Graph and JSON-LD name. */
export const SHARE_WIDTH = 1600;

export const imageUrl = (base: string, name: string): string => `${base}/images/${name}`;

/** A stored image state as the API shows it; null for a record without image_url. */
export function presentImage(state: ImageState | null, base: string): ImageView | null {
  if (!state) return null;
  const derivatives = state.status === 'ready' && state.derivatives ? JSON.parse(state.derivatives) as StoredDerivative[] : [];
  const ready = derivatives.length > 0;
  return {
    status: state.status,
    width: ready ? state.width : null,
    height: ready ? state.height : null,
    src: ready ? imageUrl(base, pick(derivatives, 'jpeg', SRC_WIDTH).name) : null,
    srcset: ready ? { avif: srcset(derivatives, 'avif', base), webp: srcset(derivatives, 'webp', base), jpeg: srcset(derivatives, 'jpeg', base) } : null,
    error: state.error,
    checked_at: state.checked_at,
  };
}

/** The copy of a format at `width`, else the largest narrower one, else the narrowest. */
export function pick(derivatives: readonly StoredDerivative[], format: StoredDerivative['format'], width: number): StoredDerivative {
  const ofFormat = derivatives.filter((d) => d.format === format).sort((a, b) => a.width - b.width);
  return ofFormat.filter((d) => d.width <= width).at(-1) ?? ofFormat[0]!;
}

export function srcset(derivatives: readonly StoredDerivative[], format: StoredDerivative['format'], base: string): string {
  return derivatives.filter((d) => d.format === format).sort((a, b) => a.width - b.width)
    .map((d) => `${imageUrl(base, d.name)} ${d.width}w`).join(', ');
}
