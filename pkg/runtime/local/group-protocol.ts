// IPC between the local runtime and a group supervisor (group-main.ts, one per squad): the
// runtime asks it to start or stop member workers; it reports members that start and exit.

export interface StartMember {
  op: 'start';
  member: string;
  /** The worker command, already wrapped in the sandbox when there is one. */
  argv: string[];
  env: Record<string, string>;
  /** Sent to the worker as its first IPC message, never put in its environment. */
  secrets?: Record<string, string>;
  cwd: string;
}

export interface StopMember {
  op: 'stop';
  member: string;
}

export type GroupCommand = StartMember | StopMember;

export interface MemberStarted {
  op: 'started';
  member: string;
  pid: number;
}

export interface MemberExited {
  op: 'exited';
  member: string;
  code: number | null;
  signal: string | null;
  /** True when the runtime asked for the stop. */
  requested: boolean;
}

export type GroupReport = MemberStarted | MemberExited;
