/** Debian's Chromium: CI installs it (.ci/run); nothing downloads a browser of its own. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless, with no network of its own (no updates, no first-run pages). */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];
