// Assertion helpers shared by the suites.

import { expect } from 'chai';

type ErrorClass<E> = abstract new (...args: never[]) => E;

/** Awaits `p`, asserts it rejected with an instance of `type`, and returns that error. */
export async function rejection<E>(p: Promise<unknown>, type: ErrorClass<E>): Promise<E> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  expect(err, `expected the call to reject with ${type.name}`).to.be.instanceOf(type);
  return err as E;
}
