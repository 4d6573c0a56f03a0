/**
 * A PostgreSQL server over TLS for the store's TLS tests: a relay on loopback that answers the
 * client's SSLRequest, takes the TLS handshake with the committed test certificates
 * (test/fixtures/tls, client certificates required), and passes the decrypted protocol on to the
 * test server in the clear. What the client presented is kept for the test to check.
 */

import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { fileURLToPath } from 'node:url';

/** The committed test certificates (test/fixtures/tls/README.md). */
export const TLS_FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'tls');

/** The passphrase of test/fixtures/tls/client.key. */
export const CLIENT_KEY_PASSPHRASE = 'fixture-key-passphrase';

// PostgreSQL's SSLRequest: its length (8) and its code (1234 << 16 | 5679).
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

/** A running relay. */
export interface TlsRelay {
  readonly port: number;
  /** The common name of each client certificate the handshake accepted, in order. */
  readonly clients: string[];
  close(): Promise<void>;
}

/** Starts a relay to the server at `upstream` (a `postgres://` URL). */
export async function tlsRelay(upstream: string): Promise<TlsRelay> {
  const target = new URL(upstream);
  const read = (name: string): Buffer => fs.readFileSync(path.join(TLS_FIXTURES, name));
  const clients: string[] = [];
  const secure = tls.createServer({ key: read('server.key'), cert: read('server.crt'), ca: read('ca.crt'), requestCert: true, rejectUnauthorized: true }, (socket) => {
    const cn = socket.getPeerCertificate().subject?.CN;
    clients.push(Array.isArray(cn) ? cn.join(',') : (cn ?? ''));
    const server = net.connect(Number(target.port || 5432), target.hostname);
    socket.pipe(server).pipe(socket);
    socket.on('error', () => server.destroy());
    server.on('error', () => socket.destroy());
  });
  secure.on('tlsClientError', () => undefined);
  const sockets = new Set<net.Socket>();
  const plain = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.once('data', (first) => {
      if (!first.equals(SSL_REQUEST)) {
        socket.destroy();
        return;
      }
      // The client sends its ClientHello only once it has the answer: nothing is read in between.
      socket.write('S');
      secure.emit('connection', socket);
    });
  });
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  return {
    port: (plain.address() as net.AddressInfo).port,
    clients,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        plain.close(() => resolve());
      }),
  };
}
