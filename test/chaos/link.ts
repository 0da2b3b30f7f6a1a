// The database link of one `akas serve` process: a TCP proxy on loopback between the process and
// PostgreSQL, which the nemesis slows (a delay added to every chunk, each way, in order) and
// restores. The issue asks for a slow link "where that can be done on loopback": tc(8) rules
// need root and shape a whole interface (every process's link and the harness's own), where a
// proxy per process needs nothing and slows one process's link alone.
//
// What PostgreSQL sees of a connection through the link is the proxy's own socket: its local
// port is the backend's client_port, so the nemesis terminates one process's backends by them.
import { createServer, connect, type Server, type Socket } from 'node:net';

export class Link {
  private server: Server | undefined;
  private delay = 0;
  /** The upstream sockets open now (to PostgreSQL). */
  private readonly upstreams = new Set<Socket>();
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    /** PostgreSQL's port on 127.0.0.1. */
    private readonly target: number,
  ) {}

  async open(): Promise<number> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (!address || typeof address !== 'object') throw new Error('the link has no port');
    this.port = address.port;
    return this.port;
  }

  /** Adds `ms` to every chunk from now on (0 restores the link). */
  slow(ms: number) {
    this.delay = ms;
  }

  get delayMs() {
    return this.delay;
  }

  /** The local ports of the link's connections to PostgreSQL (pg_stat_activity.client_port). */
  clientPorts(): number[] {
    return [...this.upstreams].map((s) => s.localPort).filter((p): p is number => typeof p === 'number');
  }

  private accept(client: Socket) {
    const upstream = connect(this.target, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    upstream.once('connect', () => this.upstreams.add(upstream));
    const forget = (s: Socket) => () => {
      this.sockets.delete(s);
      this.upstreams.delete(s);
    };
    client.once('close', forget(client));
    upstream.once('close', forget(upstream));
    this.pipe(client, upstream);
    this.pipe(upstream, client);
  }

  /**
   * Copies from → to, each chunk held for the link's delay and never overtaking the one before;
   * an end or error of one side ends the other once what was held has gone through.
   */
  private pipe(from: Socket, to: Socket) {
    let last = 0;
    let held = 0;
    let ended = false;
    const finish = () => {
      if (held === 0) to.destroy();
    };
    from.on('data', (chunk: Buffer) => {
      const delay = this.delay;
      if (delay === 0 && held === 0) {
        if (!to.destroyed) to.write(chunk);
        return;
      }
      const at = Math.max(performance.now() + delay, last);
      last = at;
      held++;
      setTimeout(
        () => {
          held--;
          if (!to.destroyed) to.write(chunk);
          if (ended) finish();
        },
        Math.max(0, at - performance.now()),
      );
    });
    const end = () => {
      ended = true;
      finish();
    };
    from.once('end', end);
    // on, not once: a socket's error with no listener would throw in the harness.
    from.on('error', end);
    from.once('close', end);
  }

  async close() {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    this.upstreams.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
