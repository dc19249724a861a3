// The audit stream's settings as src/config.ts reads them: off unless set; the file's path made absolute;
// syslog only as tcp://HOST:PORT or relp://HOST:PORT (an IPv6 address bracketed), anything else refused
// naming the setting.
import { resolve } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { tempDataDir } from '../helpers/server.js';

const base = { FLAGWIRE_DATA: tempDataDir() };

t.test('off unless set', async (t) => {
  const config = loadConfig({}, base);
  t.equal(config.auditFile, null);
  t.equal(config.auditSyslog, null);
});

t.test('a file path, and a syslog receiver over TCP or RELP', async (t) => {
  const config = loadConfig({}, { ...base, FLAGWIRE_AUDIT_FILE: 'audit.jsonl', FLAGWIRE_AUDIT_SYSLOG: 'tcp://logs.example:6514' });
  t.equal(config.auditFile, resolve('audit.jsonl'));
  t.strictSame(config.auditSyslog, { transport: 'tcp', host: 'logs.example', port: 6514 });
  t.strictSame(loadConfig({}, { ...base, FLAGWIRE_AUDIT_SYSLOG: 'tcp://[::1]:514' }).auditSyslog, {
    transport: 'tcp',
    host: '::1',
    port: 514,
  });
  t.strictSame(loadConfig({}, { ...base, FLAGWIRE_AUDIT_SYSLOG: 'relp://logs.example:2514' }).auditSyslog, {
    transport: 'relp',
    host: 'logs.example',
    port: 2514,
  });
  t.strictSame(loadConfig({}, { ...base, FLAGWIRE_AUDIT_SYSLOG: 'relp://[::1]:2514' }).auditSyslog, {
    transport: 'relp',
    host: '::1',
    port: 2514,
  });
});

t.test('anything but tcp://HOST:PORT or relp://HOST:PORT is refused, naming the setting', async (t) => {
  const refused = ['udp://logs:514', 'tcp://logs', 'tcp://logs:514/x', 'logs:514', 'tcp://logs:0', 'tcp://logs:70000'];
  for (const value of [...refused, 'relp://logs', 'relp://logs:2514/x', 'relp://logs:0', 'relps://logs:2514']) {
    t.throws(
      () => loadConfig({}, { ...base, FLAGWIRE_AUDIT_SYSLOG: value }),
      { name: 'ConfigError', setting: 'FLAGWIRE_AUDIT_SYSLOG' },
      value,
    );
  }
});
