// Whether output gets colours and spinners: only on a terminal, and never with NO_COLOR or
// TERM=dumb (FORCE_COLOR turns colours on anywhere, as most CLIs honour it).

import pc from 'picocolors';

export type Colors = ReturnType<typeof pc.createColors>;

export interface Style {
  /** Colour functions: identity when colours are off. */
  c: Colors;
  /** Spinners and prompts: a real terminal on stdout. */
  interactive: boolean;
}

export function styleFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Style {
  const tty = Boolean(stream.isTTY) && env.TERM !== 'dumb';
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0';
  const color = forced || (tty && (env.NO_COLOR === undefined || env.NO_COLOR === ''));
  return { c: pc.createColors(color), interactive: tty };
}
