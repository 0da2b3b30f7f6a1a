// A node that is closing answers in the error envelope (PROTOCOL 1.3, 13): a request that reaches
// it once close has begun is refused 503 shutting_down with Connection: close, and nothing runs.
// fastify's own 503 body while it drains has no `code` (the chaos harness met it: seeds 2 and 3
// of test/chaos/regressions.json).
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { testNode } from '../helpers/app.js';

describe('a node that is closing', () => {
  it('refuses a request pipelined behind one in flight with 503 shutting_down in the envelope, the connection closed', async () => {
    const node = await testNode();
    await node.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = node.app.server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (c) => (received += c.toString()));
    const ended = new Promise((resolve) => socket.on('close', resolve));
    await new Promise((resolve) => socket.once('connect', resolve));
    // A request in flight (its body not sent yet) keeps the connection busy, so close does not reap
    // it: the server's 100 Continue says it has the headers.
    socket.write(
      'POST /api/agent/v1/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n',
    );
    while (!received.includes('100 Continue')) await new Promise((resolve) => setImmediate(resolve));
    received = '';
    let closed = false;
    const closing = node.app.close().then(() => (closed = true));
    // Close has begun once the server no longer listens (its preClose hooks ran before).
    while (node.app.server.listening) await new Promise((resolve) => setImmediate(resolve));
    // The first request's body, then a second request on the same connection, which arrives while the node closes.
    socket.write('{}GET /api/node/keys HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await ended;
    await closing;
    expect(closed).toBe(true);
    const answers = received.split(/(?=HTTP\/1\.1 )/);
    expect(answers, received).toHaveLength(2);
    const [status, ...rest] = answers[1].split('\r\n');
    expect(status).toBe('HTTP/1.1 503 Service Unavailable');
    expect(rest.map((h) => h.toLowerCase())).toContain('connection: close');
    expect(JSON.parse(answers[1].slice(answers[1].indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'shutting_down', error: expect.any(String) });
    await node.close();
  });
});
