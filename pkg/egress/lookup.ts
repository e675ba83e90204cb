// A DNS lookup for net/http that refuses a name when any address it resolves to is refused, inside
// the connection's own lookup: the address checked is the address connected to, so a name that
// re-resolves between a check and the connection (DNS rebinding) cannot slip through. Shared by
// the server's connections to connectors and by the tools' egress proxy.

import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { type AddressClass, classifyAddress, classifyHost } from './addresses.js';

/** Why a connection to an address of this class may not be made; undefined when it may. `what` names it for the message. */
export type Refusal = (cls: AddressClass, what: string, address?: string) => string | undefined;

/** The error a refused connection fails with: its code tells the caller what happened. */
export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'EgressRefusedError';
  }
}

/** How names are resolved: dns.lookup's shape with `all: true` (tests pass their own). */
export type Resolve = (
  hostname: string,
  options: { all: true; family?: number },
  cb: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export const systemResolve: Resolve = (hostname, options, cb) => dnsLookup(hostname, options, cb);

/** A `lookup` that resolves the name and refuses it (EgressRefusedError) when the name or any address is refused. */
export function refusingLookup(
  refuse: Refusal,
  resolve: Resolve = systemResolve,
  classify: (address: string) => AddressClass | undefined = classifyAddress,
): LookupFunction {
  return (hostname, options, callback) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    const literal = classify(name);
    const byName = refuse(literal ?? classifyHost(name), `host "${hostname}"`, literal ? name : undefined);
    if (byName) return void callback(new EgressRefusedError(byName), '', 4);
    const family = typeof options.family === 'number' ? options.family : undefined;
    resolve(hostname, { all: true, ...(family ? { family } : {}) }, (err, addresses) => {
      if (err) return void callback(err, '', 4);
      for (const a of addresses) {
        const why = refuse(classify(a.address) ?? 'public', `host "${hostname}" resolves to ${a.address}, which`, a.address);
        if (why) return void callback(new EgressRefusedError(why), '', 4);
      }
      if (!addresses.length) return void callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
