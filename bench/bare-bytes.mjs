// The ceiling for a read: a bare node:http server sending the very bytes the service sent for it —
// status, headers and body captured from the service, prebuilt as one buffer per answer. The request
// header x-answer names which (the bench's load generator sets it). Answers come in the JSON file
// named by the first argument: { name: { status, headers, body (base64) } }.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const answers = new Map(Object.entries(JSON.parse(readFileSync(process.argv[2], 'utf8'))).map(([name, a]) => [name, {
  status: a.status,
  headers: a.headers,
  body: Buffer.from(a.body, 'base64'),
}]));

const server = createServer((req, res) => {
  const answer = answers.get(req.headers['x-answer']);
  if (!answer) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
});
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`bare listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
