/**
 * The ingest ceiling: a bare Fastify route that only parses the same JSON bodies, run as its own
 * process by bench/ingest.ts. Whatever the real route does beyond this is the cost of storing.
 */
import Fastify from 'fastify';

const port = Number(process.argv[2] ?? 0);
const app = Fastify({ logger: false, bodyLimit: 5 * 1024 * 1024 });
app.post('/v1/telemetry', async (request) => ({ accepted: (request.body as { events: unknown[] }).events.length }));
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ port, host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
