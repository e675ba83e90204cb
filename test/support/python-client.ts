// A virtualenv with the Python client (clients/python) installed, for its tests: the pinned
// packages of hack/clients/requirements-test.txt, then the client itself (not editable, so the
// venv holds what a user's pip install would). Made once per content, under
// ~/.cache/agentplane/python-client/<hash of the requirements and the client's files>, so a run
// with nothing changed starts at once and a changed client gets a fresh venv.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository (the build copies no .py files: the tests read them from the sources). */
export const REPO = join(dirname(fileURLToPath(import.meta.url)), '../../..');
export const PYTHON_CLIENT = join(REPO, 'clients/python');
const REQUIREMENTS = join(REPO, 'hack/clients/requirements-test.txt');

function files(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f !== '__pycache__' && !f.endsWith('.egg-info') && f !== 'build' && f !== '.pytest_cache')
    .flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]))
    .sort();
}

/** What the venv is made of: the requirements and every file of the package and its metadata. */
function contentKey(): string {
  const h = createHash('sha256').update(readFileSync(REQUIREMENTS));
  for (const f of [join(PYTHON_CLIENT, 'pyproject.toml'), join(PYTHON_CLIENT, 'README.md'), ...files(join(PYTHON_CLIENT, 'agentplane_client'))]) {
    h.update(relative(PYTHON_CLIENT, f)).update('\0').update(readFileSync(f)).update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

/** The venv's python, with the client installed; made on first use (needs PyPI then). */
export function pythonClientPython(): string {
  const root = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'agentplane', 'python-client');
  const key = contentKey();
  const venv = join(root, key);
  const python = join(venv, 'bin', 'python');
  if (existsSync(join(venv, '.installed'))) return python;
  mkdirSync(root, { recursive: true });
  // Made under a name of this process and moved in one step: a concurrent run, or one killed
  // half-way, never leaves a half-made venv under the real name.
  const tmp = `${venv}.tmp-${process.pid}`;
  // pip builds in the source folder (build/, *.egg-info): build from a copy, not the checkout.
  const src = mkdtempSync(join(tmpdir(), 'agentplane-pyclient-'));
  rmSync(tmp, { recursive: true, force: true });
  try {
    execFileSync('python3', ['-m', 'venv', tmp], { stdio: 'pipe' });
    const pip = join(tmp, 'bin', 'pip');
    execFileSync(pip, ['install', '-q', '--disable-pip-version-check', '-r', REQUIREMENTS], { stdio: 'pipe', timeout: 300_000 });
    cpSync(PYTHON_CLIENT, src, { recursive: true, filter: (f) => !f.includes('__pycache__') && !f.includes('.pytest_cache') });
    execFileSync(pip, ['install', '-q', '--disable-pip-version-check', '--no-deps', '--no-build-isolation', src], { stdio: 'pipe', timeout: 120_000 });
    execFileSync('touch', [join(tmp, '.installed')]);
    // Earlier contents' venvs are of no more use.
    for (const old of readdirSync(root)) if (old !== key && !old.includes('.tmp-')) rmSync(join(root, old), { recursive: true, force: true });
    if (!existsSync(join(venv, '.installed'))) {
      rmSync(venv, { recursive: true, force: true });
      renameSync(tmp, venv);
    }
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`could not make the Python client's virtualenv (python3 -m venv, PyPI): ${e.stderr?.toString() || e.message}`, { cause: err });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    rmSync(src, { recursive: true, force: true });
  }
  return python;
}
