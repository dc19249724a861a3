// A private rsyslog for tests and the bench: Debian's rsyslogd (`scripts/ensure.sh rsyslog` installs it
// when missing) in the foreground with a config of its own in a scratch directory: imtcp or imrelp on the
// port given, every message's raw text (without its frame) one line of a file; its own pid file and work
// directory. Started, paused, resumed and stopped by its PID.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scratchDir } from './scratch-dir.js';

const kEnsureScript = fileURLToPath(new URL('../../../scripts/ensure.sh', import.meta.url));

export class TestRsyslog {
  private proc: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private stderr = '';
  /** The file it writes each message to, one a line; kept across restarts. */
  readonly output: string;
  private readonly config: string;

  private constructor(
    private readonly dir: string,
    readonly port: number,
    transport: 'tcp' | 'relp',
  ) {
    this.output = join(dir, 'messages.log');
    this.config = join(dir, 'rsyslog.conf');
    mkdirSync(join(dir, 'work'));
    writeFileSync(
      this.config,
      [
        // Audit entries can be longer than its default of 8 KiB (docs/audit-stream.md).
        `global(workDirectory="${join(dir, 'work')}" maxMessageSize="1m")`,
        // The receiver docs/audit-stream.md recommends: a direct main queue, so a message is in the file
        // before the next is read (imrelp answers it only then) and nothing read waits in a queue that a
        // full queue's enqueue timeout or a stop past the shutdown timeout would drop.
        'main_queue(queue.type="Direct")',
        ...(transport === 'tcp'
          ? ['module(load="imtcp")', `input(type="imtcp" port="${port}" address="127.0.0.1")`]
          : ['module(load="imrelp")', `input(type="imrelp" port="${port}" address="127.0.0.1")`]),
        'template(name="raw" type="string" string="%rawmsg%\\n")',
        `*.* action(type="omfile" file="${this.output}" template="raw")`,
        '',
      ].join('\n'),
    );
  }

  /** Installs rsyslog if needed and makes its directory; start() runs it. */
  static create(port: number, transport: 'tcp' | 'relp' = 'tcp'): TestRsyslog {
    execFileSync(kEnsureScript, ['rsyslog']);
    return new TestRsyslog(scratchDir('flagwire-rsyslog-'), port, transport);
  }

  /** Starts rsyslogd; resolves once it accepts connections. */
  async start(): Promise<void> {
    const proc = spawn('/usr/sbin/rsyslogd', ['-n', '-f', this.config, '-i', join(this.dir, 'rsyslogd.pid')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.proc = proc;
    proc.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    const deadline = Date.now() + 60_000;
    while (!(await this.accepts())) {
      if (proc.exitCode !== null) throw new Error(`rsyslogd exited with ${proc.exitCode}\n${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`rsyslogd not listening in 60 s\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGSTOP: it reads nothing more, and its connections stay open (a hung receiver). */
  pause(): void {
    this.proc?.kill('SIGSTOP');
  }

  resume(): void {
    this.proc?.kill('SIGCONT');
  }

  /** SIGTERM (and SIGCONT, should it be paused); resolves once it exited. */
  async stop(): Promise<void> {
    if (this.proc !== null && this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill('SIGTERM');
      this.proc.kill('SIGCONT');
    }
    await this.exited;
    this.proc = null;
  }

  /** Every line it wrote so far. */
  lines(): string[] {
    return existsSync(this.output)
      ? readFileSync(this.output, 'utf8')
          .split('\n')
          .filter((l) => l !== '')
      : [];
  }

  private accepts(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = connect(this.port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
  }
}
