// IPC between the local runtime and a pod supervisor (one per squad): the runtime asks the pod
// to start or stop member workers; the pod reports members that exit on their own.

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

export type PodCommand = StartMember | StopMember;

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

export type PodReport = MemberStarted | MemberExited;
