// The CLI's exit codes (docs/cli.md "Exit codes"): scripts branch on them, so each means one thing.

export const EXIT = {
  /** Done; for `run`, the task ended with task_completed. */
  OK: 0,
  /** The task ended with an error event, or the event stream was lost. */
  TASK_FAILED: 1,
  /** A mistake on the command line (unknown command or flag, missing argument). */
  USAGE: 2,
  /** The task was cancelled (by this CLI on Ctrl-C, or by anyone else). */
  TASK_CANCELLED: 3,
  /** The server refused the request (4xx or 5xx): its message is printed with a hint. */
  API_ERROR: 4,
  /** No server answered at the address tried. */
  UNREACHABLE: 5,
  /** Ctrl-C and "detach": the CLI left, the task goes on. */
  DETACHED: 130,
} as const;

/** A failure the CLI reports as one message and a hint, never a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    readonly exitCode: number = EXIT.API_ERROR,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
