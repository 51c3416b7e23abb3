// The ceiling: a bare node:http server answering a fixed ~400-byte JSON object.
import { createServer } from 'node:http';

const body = JSON.stringify({
  id: 1, title: 'Abstract Painting', creation_year: 1990, medium: 'Oil on canvas', dimensions: '225 x 200 cm',
  price: 1200000, currency: 'EUR', availability: 'available', artist_name: 'Gerhard Richter',
  image_url: 'https://gallery.example/images/gerhard-richter/abstract-painting-1990.jpg',
  description: 'A fixed answer of about four hundred bytes, the size of one artwork.',
  last_synced_at: '2026-11-21T10:15:30.123Z',
});
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`baseline listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
