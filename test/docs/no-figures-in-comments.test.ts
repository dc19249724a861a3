// Comments in src/ say why, not how much: a measurement goes in bench/RESULTS.md with its command and
// date, where it can be run again and replaced, not in a comment that goes stale unseen. This scans every
// comment of src/ for what measurements look like (a time with what it cost, a rate, a percentile with a
// figure, a ratio, a share of time or CPU, "measured" beside a figure) and names each one by file and line.
// Design values (a 1 MiB cap, a 50 ms poll, 10,000 users, 0% or 100%) do not match.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const kRepo = resolve(fileURLToPath(new URL('../../../', import.meta.url)));

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.[cm]?ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** A run of comment lines joined into one text, with the line of each of its characters. */
interface CommentBlock {
  text: string;
  lines: number[];
}

/** Every comment of `source` (line comments, block comments), consecutive comment lines as one block. */
function commentBlocks(source: string): CommentBlock[] {
  const blocks: CommentBlock[] = [];
  let current: CommentBlock | null = null;
  let inBlock = false;
  source.split('\n').forEach((line, index) => {
    let body: string | null = null;
    if (inBlock) {
      body = line.replace(/^\s*\*?/, '');
      if (line.includes('*/')) {
        body = body.replace(/\*\/.*$/, '');
        inBlock = false;
      }
    } else {
      const lineComment = /^\s*\/\/(.*)$/.exec(line) ?? /[;{),]\s*\/\/(.*)$/.exec(line);
      const blockStart = /^\s*\/\*\*?(.*)$/.exec(line);
      if (lineComment !== null) body = lineComment[1]!;
      else if (blockStart !== null) {
        body = blockStart[1]!;
        if (body.includes('*/')) body = body.replace(/\*\/.*$/, '');
        else inBlock = true;
      }
    }
    if (body === null) {
      current = null;
      return;
    }
    if (current === null) {
      current = { text: '', lines: [] };
      blocks.push(current);
    }
    const text = `${body} `;
    for (let i = 0; i < text.length; i++) current.lines.push(index + 1);
    current.text += text;
  });
  return blocks;
}

/** A figure of time, or a range of them: `18 µs`, `63-84 µs`, `264 against 140 ms`. */
const kTime = String.raw`\d[\d,.]*(?:\s*(?:-|to|against)\s*\d[\d,.]*)?\s*(?:ms|µs|us|ns)\b`;

/** What a measurement looks like in a sentence; each is one the comments of src/ once held. */
const kMeasurements: { what: string; pattern: RegExp }[] = [
  { what: 'a time it cost', pattern: new RegExp(String.raw`\b(?:CPU|costs?|took|takes|spent|saved)\b[^.;]{0,40}?${kTime}`) },
  { what: 'a time of CPU', pattern: new RegExp(`${kTime}(?=[^.;]{0,30}\\b(?:of CPU|CPU|faster|slower|saved|longer)\\b)`) },
  { what: 'a rate', pattern: /\b\d[\d,.]*\s*(?:req\/s|rps|ops\/s)\b|\brequests (?:a|per) (?:CPU-)?second\b/ },
  { what: 'a percentile', pattern: /\bp(?:50|90|95|99)\b[^.;]{0,40}?\d/ },
  { what: 'a ratio', pattern: /\b\d+\.\d+x\b|\b\d+(?:\.\d+)?x (?:faster|slower)\b/ },
  {
    what: 'a share of time or CPU',
    pattern: /\d%\s+(?:longer|faster|slower|more|less|of\s+(?:(?:the|a|its|an)\s+)?(?:[\w-]+(?:'s)?\s+){0,3}(?:time|CPU))/,
  },
  { what: 'a resident size', pattern: /\bRSS\b[^.;]{0,30}\d/ },
  { what: 'what something took', pattern: /\btook\b[^.;]{0,60}?\d[\d.,]*(?:\s*[a-zµ%]+)?/ },
  { what: 'how long something takes', pattern: /\b(?:about|takes|took)\s+\d[\d.]*\s*(?:ms|µs|us|ns|s)\b/ },
  { what: 'microseconds or nanoseconds', pattern: /\d[\d.,]*\s*(?:µs|us|ns)\b(?!\s*\.\.)/ },
  {
    what: 'a time against another',
    pattern: /\d[\d.,]*\s*(?:ms|s)\s+against\s+\d|\b\d[\d.,]*\s+against\s+\d[\d.,]*\s*(?:ms|µs|us|ns|s)\b/,
  },
  { what: 'how long a thread was held', pattern: /\bheld\s+(?:[\w']+\s+){0,6}?\d[\d.,]*(?:-\d[\d.,]*)?\s*(?:ms|s)\b/ },
  { what: 'a difference measured', pattern: /\+\d[\d.,]*\s*(?:ms|µs|us|ns|MiB|KB|MB)\b/ },
  { what: 'a median', pattern: /\d[^.;]{0,20}\bat the median\b/ },
  { what: 'CPU seconds', pattern: /\d[\d.]*\s*CPU s\b/ },
];

/** `file:line: what` for every figure of a measurement in the comments of `source`. */
function figuresIn(file: string, source: string): string[] {
  const found = new Map<number, string>();
  for (const block of commentBlocks(source)) {
    for (const { what, pattern } of kMeasurements) {
      for (const m of block.text.matchAll(new RegExp(pattern.source, 'g'))) {
        const line = block.lines[m.index]!;
        if (!found.has(line)) found.set(line, `${what}: "${m[0].trim()}"`);
      }
    }
    // "measured" is a word for sizes counted too ("measured for its bound"): only beside a figure.
    for (const sentence of block.text.split(/\.\s/)) {
      if (/\bmeasured\b/.test(sentence) && /\d/.test(sentence)) {
        const line = block.lines[block.text.indexOf(sentence)]!;
        if (!found.has(line)) found.set(line, `"measured" beside a figure: "${sentence.trim().slice(0, 60)}"`);
      }
    }
  }
  return [...found.entries()].sort(([a], [b]) => a - b).map(([line, what]) => `${file}:${line}: ${what}`);
}

t.test('the patterns catch the measurements comments once held, and pass design values', async (t) => {
  const measured = [
    '// promise on each side) cost 63-84 µs of CPU per round trip on one core; this channel 18 µs (the',
    "// ran (a 210 MB export held another project's evaluations 3.1-3.3 s).",
    '// 1.6-2.0x its quiet figure (bench/RESULTS.md, issue 58).',
    '// of 8-32 (in-process; at the node 1.10-1.14x req/s per CPU-second: issue 57).',
    '  // (measured: 5.4 KB per PATCH instead of 0.4 KB).',
    "// per flag, a 30-byte id is no longer written (keyHash was 12-15% of the eval worker's time for",
    "/** Units one batch's evaluations may spend together (about 30 ms of work). */",
    '// evaluations went from 0.44 to 7.08 ms at the p99 (issue 58, 16 cores).',
  ];
  for (const line of measured) t.equal(figuresIn('x.ts', line).length, 1, `caught: ${line.trim()}`);
  const design = [
    "// Reads request bodies with two bounds: 1 MiB per body (or the caller's smaller cap).",
    '/** Seconds buckets for request latencies, 50 µs .. 5 s. */',
    '// Doubling from 250 ms to 10 s, jittered (src/outbox/outbox.ts backoffMs: the one backoff rule).',
    "// it reads the store's commit number every 50 ms and brings each watched project environment to the",
    '/** What a strategy\'s parameters say: `50% of users, sticky on default, group "checkout"`. */',
    "/** A project's pending ones, counted and measured for its bound without reading them. */",
    ' * held past its grace period (commonly 5 s or more: the default exits within 4.5 s).',
    '/** The most users, and groups, the page lists: the latest changed (an organisation may hold 10,000 users). */',
  ];
  for (const line of design) t.same(figuresIn('x.ts', line), [], `passed: ${line.trim()}`);
  t.same(figuresIn('x.ts', 'const a = 1; // took 47 s'), ['x.ts:1: what something took: "took 47 s"'], 'a comment after code');
  t.same(figuresIn('x.ts', 'const s = "took 47 s";'), [], 'a string is not a comment');
});

t.test('no comment in src/ carries a measurement: figures go in bench/RESULTS.md', async (t) => {
  const files = sourceFiles(join(kRepo, 'src'));
  t.ok(files.length > 100, `src/ read (${files.length} files)`);
  const figures = files.flatMap((file) => figuresIn(relative(kRepo, file), readFileSync(file, 'utf8')));
  t.same(figures, [], 'say why in the comment; put the figure, its command and date in bench/RESULTS.md');
});
