// The worker's first module: it ends the process on SIGTERM or SIGINT until the worker's own
// shutdown takes over (`takeOverSignals`). Needed because an ignored signal survives exec: in
// the sandbox, bubblewrap ignores SIGTERM so that a stop reaches only the worker
// (pkg/runtime/local/sandbox.ts), and a Node process ignores what it inherited ignored until it
// handles the signal itself. Without this, a worker stopped while it loads would ignore the stop
// and wait out the stop grace for SIGKILL.

const early = (): never => process.exit(143);
process.on('SIGTERM', early);
process.on('SIGINT', early);

/** Hands SIGTERM and SIGINT to the worker's shutdown (added first: never a moment unhandled). */
export function takeOverSignals(shutdown: () => void): void {
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, shutdown);
    process.off(sig, early);
  }
}
