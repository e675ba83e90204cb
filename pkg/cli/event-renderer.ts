// Renders an agent's events for people: text as it arrives, each tool call as one line (a
// spinner while it runs when the output is a terminal, its outcome after), follow-ups and
// retries as notes, and a closing summary of a task (result, turns, cost, duration). Used by
// `run` (live) and `logs` (history and -f).

import ora, { type Ora } from 'ora';
import type { AgentEvent } from '../api/event.js';
import type { Style } from './style.js';

export type Outcome = 'completed' | 'failed' | 'cancelled';

export const outcomeOf = (type: string): Outcome | undefined =>
  type === 'task_completed' ? 'completed' : type === 'error' ? 'failed' : type === 'task_cancelled' ? 'cancelled' : undefined;

const WIDTH = 100;

/** First line of `s`, cut to `max` characters. */
export function oneLine(s: string, max = WIDTH): string {
  const line = s.split('\n').find((l) => l.trim()) ?? '';
  const t = line.trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** What a tool call is about, in one line: its command, path or pattern, else its input as JSON. */
export function describeCall(input: unknown): string {
  if (input && typeof input === 'object') {
    const i = input as Record<string, unknown>;
    for (const k of ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description', 'prompt']) {
      if (typeof i[k] === 'string') return oneLine(i[k], 80);
    }
  }
  return oneLine(JSON.stringify(input) ?? '', 80);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  return `${m}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
}

export interface RendererOptions {
  style: Style;
  write: (text: string) => void;
  /** Spinners for running tool calls (a terminal only). */
  spinners: boolean;
  /**
   * A line when a tool call starts (following live without a terminal): a long call is visible
   * while it runs, and its result line follows when it ends.
   */
  callLines?: boolean;
  /** The stream ora draws on (stdout). */
  stream?: NodeJS.WriteStream;
}

interface Call {
  tool: string;
  about: string;
}

export class EventRenderer {
  private readonly calls = new Map<string, Call>();
  private spinner: Ora | undefined;
  private lastText = '';
  private paused = false;
  private readonly held: AgentEvent[] = [];

  constructor(private o: RendererOptions) {
    // A terminal of unknown width (0 columns, e.g. a pty nobody sized) makes ora's line count
    // infinite; draw no spinner there.
    const stream = o.stream ?? process.stdout;
    if (o.spinners && !(stream.columns > 0)) this.o = { ...o, spinners: false };
  }

  /** Renders one event; returns the task's outcome when the event ends a task. */
  event(ev: AgentEvent): Outcome | undefined {
    if (this.paused) {
      this.held.push(ev);
      return outcomeOf(ev.type);
    }
    this.draw(ev);
    return outcomeOf(ev.type);
  }

  /** Stops drawing (a prompt has the terminal); events are kept until `resume`. */
  pause(): void {
    this.paused = true;
    this.spinner?.stop();
  }

  resume(): void {
    this.paused = false;
    for (const ev of this.held.splice(0)) this.draw(ev);
    this.spin();
  }

  /** A line of the CLI's own (e.g. "cancelling…"), drawn around the spinner. */
  note(text: string): void {
    this.line(text);
  }

  /** Clears the spinner for good (on exit). */
  close(): void {
    this.spinner?.stop();
    this.spinner = undefined;
  }

  private line(text: string): void {
    const spinning = this.spinner?.isSpinning;
    if (spinning) this.spinner!.stop();
    this.o.write(`${text}\n`);
    if (spinning) this.spin();
  }

  /** The spinner shows the calls still running; none when nothing runs. */
  private spin(): void {
    if (!this.o.spinners || this.paused) return;
    if (!this.calls.size) {
      this.spinner?.stop();
      return;
    }
    const text = [...this.calls.values()].map((c) => `${c.tool} ${this.o.style.c.dim(c.about)}`).join(', ');
    if (!this.spinner) this.spinner = ora({ text, stream: this.o.stream ?? process.stdout, discardStdin: false, isEnabled: true, color: 'cyan' });
    this.spinner.text = text;
    if (!this.spinner.isSpinning) this.spinner.start();
  }

  private draw(ev: AgentEvent): void {
    const { c } = this.o.style;
    switch (ev.type) {
      case 'task_started': {
        const p = ev.payload as AgentEvent<'task_started'>['payload'];
        this.line(c.dim(`▶ task ${ev.task}: ${oneLine(p.instructions)}`));
        break;
      }
      case 'text': {
        const p = ev.payload as AgentEvent<'text'>['payload'];
        this.lastText = p.content;
        this.line(p.content.replace(/\n+$/, ''));
        break;
      }
      case 'thinking': {
        const p = ev.payload as AgentEvent<'thinking'>['payload'];
        this.line(c.dim(c.italic(`✻ ${oneLine(p.content)}`)));
        break;
      }
      case 'tool_call': {
        const p = ev.payload as AgentEvent<'tool_call'>['payload'];
        const call = { tool: p.tool, about: describeCall(p.input) };
        this.calls.set(p.id, call);
        if (this.o.callLines) this.line(c.dim(`▸ ${call.tool}${call.about ? ` ${call.about}` : ''}`));
        this.spin();
        break;
      }
      case 'tool_result': {
        const p = ev.payload as AgentEvent<'tool_result'>['payload'];
        const call = this.calls.get(p.id) ?? { tool: p.tool, about: '' };
        this.calls.delete(p.id);
        const out = oneLine(p.output, 80);
        const mark = p.isError ? c.red('✖') : c.green('✔');
        this.line(`${mark} ${c.bold(call.tool)}${call.about ? ` ${call.about}` : ''}${out ? c.dim(` → ${out}`) : ''}`);
        this.spin();
        break;
      }
      case 'user_message': {
        const p = ev.payload as AgentEvent<'user_message'>['payload'];
        this.line(c.cyan(`» ${p.content}`));
        break;
      }
      case 'approval_requested': {
        const p = ev.payload as AgentEvent<'approval_requested'>['payload'];
        this.line(c.yellow(`? ${p.tool} ${describeCall(p.input)} waits for approval (id ${p.id}; agentplane approve|deny <agent> ${p.id})`));
        break;
      }
      case 'approval_decided': {
        const p = ev.payload as AgentEvent<'approval_decided'>['payload'];
        const mark = p.decision === 'allow' ? c.green('✔ allowed') : c.red('✖ denied');
        this.line(`${mark} ${c.bold(p.tool)} ${c.dim(`by ${p.decidedBy}${p.reason ? `: ${p.reason}` : ''}`)}`);
        break;
      }
      case 'message': {
        const p = ev.payload as AgentEvent<'message'>['payload'];
        const how = p.delivery === 'queued' ? ' (queued until it wakes)' : '';
        this.line(`${c.cyan('✉')} ${c.bold(`${p.from} → ${p.to}`)}${c.dim(how)}: ${oneLine(p.text, 200)}`);
        break;
      }
      case 'model_retry': {
        const p = ev.payload as AgentEvent<'model_retry'>['payload'];
        this.line(c.yellow(`! ${p.message}`));
        break;
      }
      case 'task_completed': {
        const p = ev.payload as AgentEvent<'task_completed'>['payload'];
        this.endCalls();
        if (p.result && p.result.trim() !== this.lastText.trim()) this.line(p.result.replace(/\n+$/, ''));
        const parts = [`${p.turns} turn${p.turns === 1 ? '' : 's'}`, `$${(p.cost_usd ?? 0).toFixed(4)}`, formatDuration(p.duration_ms ?? 0)];
        this.line(`${c.green('✔')} ${c.bold(`task ${ev.task} completed`)} ${c.dim(`· ${parts.join(' · ')}`)}`);
        this.lastText = '';
        break;
      }
      case 'task_cancelled': {
        const p = ev.payload as AgentEvent<'task_cancelled'>['payload'];
        this.endCalls();
        this.line(`${c.yellow('■')} ${c.bold(`task ${ev.task} cancelled`)}${p.reason ? c.dim(`: ${p.reason}`) : ''}`);
        break;
      }
      case 'error': {
        const p = ev.payload as AgentEvent<'error'>['payload'];
        this.endCalls();
        this.line(`${c.red('✖')} ${c.bold(`task ${ev.task} failed`)}: ${p.message}${p.reason ? c.dim(` (${p.reason})`) : ''}`);
        break;
      }
      default:
        this.line(c.dim(`${ev.type} ${JSON.stringify(ev.payload)}`));
    }
  }

  /** Calls still open when the task ended never report; forget them. */
  private endCalls(): void {
    this.calls.clear();
    this.spinner?.stop();
  }
}
