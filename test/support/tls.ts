// Throwaway certificates for tests, made with the openssl command line: a CA with a serving
// certificate for 127.0.0.1 and localhost (and the in-cluster Service name), and client
// certificates signed by any CA.

import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Cert {
  key: Buffer;
  cert: Buffer;
}

/**
 * A throwaway CA (`serving-ca.{crt,key}` in `dir`) and a serving certificate (`serving.{crt,key}`)
 * for 127.0.0.1, localhost and the Service's DNS name; returns the CA.
 */
export async function makeServingCert(dir: string): Promise<Buffer> {
  const cnf = join(dir, 'openssl.cnf');
  writeFileSync(
    cnf,
    [
      '[req]',
      'distinguished_name = dn',
      '[dn]',
      '[ca]',
      'basicConstraints = critical, CA:TRUE',
      'keyUsage = critical, keyCertSign, cRLSign, digitalSignature',
      'subjectKeyIdentifier = hash',
      '[server]',
      'basicConstraints = critical, CA:FALSE',
      'keyUsage = critical, digitalSignature',
      'extendedKeyUsage = serverAuth',
      'subjectAltName = DNS:localhost, DNS:agentplane.agentplane-system.svc, IP:127.0.0.1',
      '[client]',
      'basicConstraints = critical, CA:FALSE',
      'keyUsage = critical, digitalSignature',
      'extendedKeyUsage = clientAuth',
      '',
    ].join('\n'),
  );
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', join(dir, 'serving-ca.key')]);
  await openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    join(dir, 'serving-ca.key'),
    '-subj',
    '/CN=agentplane-test-serving-ca',
    '-days',
    '2',
    '-config',
    cnf,
    '-extensions',
    'ca',
    '-out',
    join(dir, 'serving-ca.crt'),
  ]);
  await sign(dir, join(dir, 'serving-ca'), 'serving', '/CN=agentplane', 'server');
  return readFileSync(join(dir, 'serving-ca.crt'));
}

/** A client certificate signed by `caBase`.{crt,key}. */
export async function issueClientCert(dir: string, caBase: string, name: string, subject: string): Promise<Cert> {
  await sign(dir, caBase, name, subject, 'client');
  return { key: readFileSync(join(dir, `${name}.key`)), cert: readFileSync(join(dir, `${name}.crt`)) };
}

async function sign(dir: string, caBase: string, name: string, subject: string, ext: string): Promise<void> {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  await openssl(['req', '-new', '-key', key, '-subj', subject, '-config', join(dir, 'openssl.cnf'), '-out', csr]);
  await openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    `${caBase}.crt`,
    '-CAkey',
    `${caBase}.key`,
    '-days',
    '2',
    '-set_serial',
    `0x${Date.now().toString(16)}${Math.floor(Math.random() * 1e6).toString(16)}`,
    '-extfile',
    join(dir, 'openssl.cnf'),
    '-extensions',
    ext,
    '-out',
    join(dir, `${name}.crt`),
  ]);
}

async function openssl(args: string[]): Promise<void> {
  await run('openssl', args);
}
