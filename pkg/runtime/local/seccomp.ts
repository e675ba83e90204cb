// The seccomp filter every sandboxed worker and tool runs under (bubblewrap's `--seccomp FD`
// loads it after the sandbox is set up, before the worker starts). It refuses the system calls a
// tool could use to leave or see past its sandbox: mounting and changing root, making or joining
// namespaces, tracing or reading other processes, the kernel keyring, loading kernel code, and
// the handle-based opens that escape a bind mount. Everything else is allowed: the filter is a
// deny list on top of the sandbox's namespaces, dropped capabilities and no_new_privs, not the
// boundary on its own. The program is classic BPF, built here because the list is short and the
// alternative (libseccomp) is a native library the project would have to install.

/** The kernel's `AUDIT_ARCH_*` for the architectures the filter knows. */
const AUDIT_ARCH = { x64: 0xc000003e, arm64: 0xc00000b7 } as const;
export type SeccompArch = keyof typeof AUDIT_ARCH;

const EPERM = 1;
const ENOSYS = 38;

/**
 * Refused with EPERM. Numbers per architecture: x86_64's own table, and the generic table that
 * arm64 uses (`asm/unistd_64.h`, `asm-generic/unistd.h`).
 */
const DENIED: Record<string, { x64?: number; arm64?: number }> = {
  // Filesystem views: a tool must not unmount what hides the data directory or remount / rw.
  mount: { x64: 165, arm64: 40 },
  umount2: { x64: 166, arm64: 39 },
  pivot_root: { x64: 155, arm64: 41 },
  chroot: { x64: 161, arm64: 51 },
  move_mount: { x64: 429, arm64: 429 },
  open_tree: { x64: 428, arm64: 428 },
  fsopen: { x64: 430, arm64: 430 },
  fsconfig: { x64: 431, arm64: 431 },
  fsmount: { x64: 432, arm64: 432 },
  fspick: { x64: 433, arm64: 433 },
  mount_setattr: { x64: 442, arm64: 442 },
  // A file handle opens an inode by number, past any bind mount's root.
  open_by_handle_at: { x64: 304, arm64: 265 },
  name_to_handle_at: { x64: 303, arm64: 264 },
  // New namespaces (a user namespace gives back every capability inside it) and joining others.
  unshare: { x64: 272, arm64: 97 },
  setns: { x64: 308, arm64: 268 },
  // Other processes' memory and descriptors.
  ptrace: { x64: 101, arm64: 117 },
  process_vm_readv: { x64: 310, arm64: 270 },
  process_vm_writev: { x64: 311, arm64: 271 },
  pidfd_getfd: { x64: 438, arm64: 438 },
  kcmp: { x64: 312, arm64: 272 },
  // The kernel keyring is not namespaced.
  keyctl: { x64: 250, arm64: 219 },
  add_key: { x64: 248, arm64: 217 },
  request_key: { x64: 249, arm64: 218 },
  // Kernel code, and kernel-wide state.
  init_module: { x64: 175, arm64: 105 },
  finit_module: { x64: 313, arm64: 273 },
  delete_module: { x64: 176, arm64: 106 },
  kexec_load: { x64: 246, arm64: 104 },
  kexec_file_load: { x64: 320, arm64: 294 },
  bpf: { x64: 321, arm64: 280 },
  perf_event_open: { x64: 298, arm64: 241 },
  userfaultfd: { x64: 323, arm64: 282 },
  fanotify_init: { x64: 300, arm64: 262 },
  lookup_dcookie: { x64: 212, arm64: 18 },
  swapon: { x64: 167, arm64: 224 },
  swapoff: { x64: 168, arm64: 225 },
  reboot: { x64: 169, arm64: 142 },
  syslog: { x64: 103, arm64: 116 },
  acct: { x64: 163, arm64: 89 },
  quotactl: { x64: 179, arm64: 60 },
  quotactl_fd: { x64: 443, arm64: 443 },
  vhangup: { x64: 153, arm64: 58 },
  settimeofday: { x64: 164, arm64: 170 },
  clock_settime: { x64: 227, arm64: 112 },
  adjtimex: { x64: 159, arm64: 171 },
  clock_adjtime: { x64: 305, arm64: 266 },
  sethostname: { x64: 170, arm64: 161 },
  setdomainname: { x64: 171, arm64: 162 },
  iopl: { x64: 172 },
  ioperm: { x64: 173 },
  uselib: { x64: 134 },
};

/**
 * Refused with ENOSYS, which callers read as "not supported here" and fall back from: clone3
 * (its flags live in memory a filter cannot read, so glibc then uses clone, whose flags it can)
 * and io_uring (which would bypass this filter for the calls it performs).
 */
const UNSUPPORTED: Record<string, { x64: number; arm64: number }> = {
  clone3: { x64: 435, arm64: 435 },
  io_uring_setup: { x64: 425, arm64: 425 },
  io_uring_enter: { x64: 426, arm64: 426 },
  io_uring_register: { x64: 427, arm64: 427 },
};

const CLONE = { x64: 56, arm64: 220 };
const IOCTL = { x64: 16, arm64: 29 };
/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME. */
const CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080;
/** TIOCSTI pushes input into a terminal; TIOCLINUX can too, on a virtual console. */
const TERMINAL_INJECTION = [0x5412, 0x541c];
/** x86_64 system calls with this bit set are the x32 ABI: another table, refused whole. */
const X32_SYSCALL_BIT = 0x40000000;

// Classic BPF opcodes (linux/filter.h, linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
// struct seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8i (the low 32 bits first, little-endian).
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;
const ARG1_LOW = 24;

interface Insn {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

const ld = (offset: number): Insn => ({ code: LD_W_ABS, jt: 0, jf: 0, k: offset });
const ret = (k: number): Insn => ({ code: RET_K, jt: 0, jf: 0, k });
const errno = (e: number): Insn => ret(RET_ERRNO | e);

/** The architecture this process runs on, if the filter knows it. */
export function currentSeccompArch(): SeccompArch | undefined {
  return process.arch === 'x64' || process.arch === 'arm64' ? process.arch : undefined;
}

/** The names of the system calls the filter refuses on `arch` (for docs and tests). */
export function deniedSyscalls(arch: SeccompArch): string[] {
  return Object.entries(DENIED)
    .filter(([, nr]) => nr[arch] !== undefined)
    .map(([name]) => name);
}

/** The filter as bubblewrap reads it: an array of `struct sock_filter` in native byte order. */
export function seccompProgram(arch: SeccompArch): Buffer {
  const p: Insn[] = [];
  // Another architecture's calls (an i386 binary's int 0x80 on x86_64) use other numbers: refuse.
  p.push(ld(ARCH), { code: JEQ_K, jt: 1, jf: 0, k: AUDIT_ARCH[arch] }, errno(ENOSYS), ld(NR));
  if (arch === 'x64') p.push({ code: JGE_K, jt: 0, jf: 1, k: X32_SYSCALL_BIT }, errno(ENOSYS));
  // Each refusal is "not this call: skip the return after me".
  for (const nr of Object.values(DENIED)) {
    const n = nr[arch];
    if (n !== undefined) p.push({ code: JEQ_K, jt: 0, jf: 1, k: n }, errno(EPERM));
  }
  for (const nr of Object.values(UNSUPPORTED)) p.push({ code: JEQ_K, jt: 0, jf: 1, k: nr[arch] }, errno(ENOSYS));
  // clone with a namespace flag; any other clone (threads, fork) is allowed.
  p.push({ code: JEQ_K, jt: 0, jf: 4, k: CLONE[arch] }, ld(ARG0_LOW), { code: JSET_K, jt: 0, jf: 1, k: CLONE_NAMESPACE_FLAGS }, errno(EPERM), ret(RET_ALLOW));
  // ioctl requests that type into the terminal the sandbox was started from.
  // Not ioctl: jump over the load, the comparisons and their two returns to the final allow.
  p.push({ code: JEQ_K, jt: 0, jf: TERMINAL_INJECTION.length + 3, k: IOCTL[arch] }, ld(ARG1_LOW));
  TERMINAL_INJECTION.forEach((req, i) => p.push({ code: JEQ_K, jt: TERMINAL_INJECTION.length - i, jf: 0, k: req }));
  p.push(ret(RET_ALLOW), errno(EPERM), ret(RET_ALLOW));
  const out = Buffer.alloc(p.length * 8);
  p.forEach((insn, i) => {
    out.writeUInt16LE(insn.code, i * 8);
    out.writeUInt8(insn.jt, i * 8 + 2);
    out.writeUInt8(insn.jf, i * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
  });
  return out;
}
