// A receiver for Corral's alert webhooks: checks every request's signature with the
// standardwebhooks package, drops repeats by webhook-id, and prints what fired.
//
//   npm install standardwebhooks
//   CORRAL_WEBHOOK_SECRET=whsec_… PORT=3000 node webhook-receiver.mjs
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.CORRAL_WEBHOOK_SECRET);
// Delivery is at least once: an attempt may be repeated, always with the same webhook-id.
const seen = new Set();

const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    let payload;
    try {
      // The raw body, as received: parsing and re-serializing it would change the signed bytes.
      payload = webhook.verify(body, req.headers);
    } catch (err) {
      console.error(`refused: ${err.message}`);
      res.writeHead(400).end();
      return;
    }
    const id = req.headers['webhook-id'];
    if (!seen.has(id)) {
      seen.add(id);
      console.log(`${payload.type} ${payload.data.agent.name}: ${payload.data.summary}`);
    }
    res.writeHead(204).end();
  });
});
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => console.log(`listening on ${server.address().port}`));
