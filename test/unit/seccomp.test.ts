// The sandbox's seccomp program, run by a small classic-BPF interpreter over hand-made
// seccomp_data: the decisions for both architectures it knows (the security suite runs the real
// filter in the kernel, on this machine's architecture only).

import { expect } from 'chai';
import { deniedSyscalls, seccompProgram, type SeccompArch } from '../../pkg/runtime/local/seccomp.js';

const ARCH = { x64: 0xc000003e, arm64: 0xc00000b7 };
const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;

/** Runs the program on one system call: its number, its architecture and its first two arguments. */
function run(prog: Buffer, data: { nr: number; arch: number; args?: number[] }): number {
  const word = (off: number): number => {
    if (off === 0) return data.nr >>> 0;
    if (off === 4) return data.arch >>> 0;
    if (off >= 16 && (off - 16) % 8 === 0) return (data.args?.[(off - 16) / 8] ?? 0) >>> 0;
    throw new Error(`load at ${off}`);
  };
  let a = 0;
  for (let pc = 0; pc * 8 < prog.length;) {
    const code = prog.readUInt16LE(pc * 8);
    const jt = prog.readUInt8(pc * 8 + 2);
    const jf = prog.readUInt8(pc * 8 + 3);
    const k = prog.readUInt32LE(pc * 8 + 4);
    switch (code) {
      case 0x20:
        a = word(k);
        pc++;
        break;
      case 0x15:
        pc += 1 + (a === k ? jt : jf);
        break;
      case 0x35:
        pc += 1 + (a >= k ? jt : jf);
        break;
      case 0x45:
        pc += 1 + ((a & k) !== 0 ? jt : jf);
        break;
      case 0x06:
        return k;
      default:
        throw new Error(`opcode ${code.toString(16)} at ${pc}`);
    }
  }
  throw new Error('ran off the end');
}

const NR: Record<SeccompArch, Record<string, number>> = {
  x64: {
    read: 0,
    write: 1,
    openat: 257,
    execve: 59,
    clone: 56,
    clone3: 435,
    unshare: 272,
    mount: 165,
    ptrace: 101,
    ioctl: 16,
    setns: 308,
    io_uring_setup: 425,
    iopl: 172,
  },
  arm64: {
    read: 63,
    write: 64,
    openat: 56,
    execve: 221,
    clone: 220,
    clone3: 435,
    unshare: 97,
    mount: 40,
    ptrace: 117,
    ioctl: 29,
    setns: 268,
    io_uring_setup: 425,
  },
};

describe('sandbox seccomp filter', () => {
  for (const arch of ['x64', 'arm64'] as const) {
    describe(arch, () => {
      const prog = seccompProgram(arch);
      const call = (name: string, args?: number[]): number => run(prog, { nr: NR[arch][name], arch: ARCH[arch], ...(args ? { args } : {}) });

      it('allows ordinary calls, and clone without namespace flags (threads, fork)', () => {
        for (const name of ['read', 'write', 'openat', 'execve']) expect(call(name), name).to.equal(ALLOW);
        expect(call('clone', [0x003d0f00])).to.equal(ALLOW); // pthread_create's flags
        expect(call('clone', [0x01200011])).to.equal(ALLOW); // fork's
        expect(call('ioctl', [1, 0x5401])).to.equal(ALLOW); // TCGETS
      });

      it('refuses namespaces, mounts and tracing with EPERM', () => {
        for (const name of ['unshare', 'mount', 'ptrace', 'setns']) expect(call(name), name).to.equal(EPERM);
        expect(call('clone', [0x10000000 | 0x11])).to.equal(EPERM); // CLONE_NEWUSER
        expect(call('clone', [0x00020000])).to.equal(EPERM); // CLONE_NEWNS
        expect(call('ioctl', [0, 0x5412])).to.equal(EPERM); // TIOCSTI
      });

      it('answers clone3 and io_uring with ENOSYS, so callers fall back', () => {
        expect(call('clone3')).to.equal(ENOSYS);
        expect(call('io_uring_setup')).to.equal(ENOSYS);
      });

      it('refuses another architecture’s calls', () => {
        expect(run(prog, { nr: NR[arch].read, arch: 0x40000003 })).to.equal(ENOSYS); // i386
      });

      it('lists what it denies', () => {
        expect(deniedSyscalls(arch)).to.include.members(['mount', 'unshare', 'setns', 'ptrace', 'keyctl', 'bpf', 'open_by_handle_at', 'init_module']);
        expect(deniedSyscalls(arch).includes('iopl')).to.equal(arch === 'x64');
      });
    });
  }

  it('x86_64: refuses the x32 ABI', () => {
    expect(run(seccompProgram('x64'), { nr: 0x40000000 | 1, arch: ARCH.x64 })).to.equal(ENOSYS);
    expect(run(seccompProgram('x64'), { nr: 172, arch: ARCH.x64 })).to.equal(EPERM); // iopl
  });
});
