import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { childPids, cpuSample, treeCpuSample, treeMemorySample } from '../../bench/procstat.js';

/**
 * The process-tree readings of a Switchyard with workers > 1 (control process + children), on a real
 * parent with two real children: the children are found by their parent PID, and CPU a child burns shows
 * in that child's sample, not the parent's.
 */

// Two children: the first, when asked, spins until it has used 300 ms of CPU (its own clock, so a loaded
// machine only makes it take longer); the second idles. Both report their PIDs through the parent.
const CHILD = `
const spin = Number(process.argv[1]);
process.on('message', () => {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if (used.user + used.system >= spin * 1000) break;
  }
  process.send('spun');
});
process.send(process.pid);`;
const PARENT = `
const { spawn } = require('node:child_process');
const child = (spin) => spawn(process.execPath, ['-e', ${JSON.stringify(CHILD)}, String(spin)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
const kids = [child(300), child(0)];
// In the children's order (the busy one first), whichever reports first.
const pids = [];
kids.forEach((k, i) => k.on('message', (m) => {
  if (typeof m === 'number') { pids[i] = m; if (pids[0] && pids[1]) console.log('pids ' + pids.join(' ')); }
  else console.log('spun');
}));
process.stdin.on('data', () => kids[0].send('spin'));
process.stdin.on('end', () => { for (const k of kids) k.kill(); process.exit(0); });
`;

test('treeCpuSample reads a process and each of its children; a busy child shows in its own sample', async () => {
  const parent = spawn(process.execPath, ['-e', PARENT], { stdio: ['pipe', 'pipe', 'inherit'] });
  // One iterator for the whole test: leaving a for-await loop would close the line reader.
  const lines = createInterface({ input: parent.stdout })[Symbol.asyncIterator]();
  const next = async (prefix: string): Promise<string> => {
    const timer = setTimeout(() => parent.kill('SIGKILL'), 20_000);
    try {
      for (;;) {
        const line = await lines.next();
        if (line.done) throw new Error('the parent exited');
        if (line.value.startsWith(prefix)) return line.value;
      }
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    const pids = (await next('pids ')).slice(5).split(' ').map(Number);
    const pid = parent.pid as number;
    assert.deepEqual(
      childPids(pid),
      [...pids].sort((a, b) => a - b),
    );
    const before = treeCpuSample(pid);
    assert.equal(before.root.pid, pid);
    assert.deepEqual(before.children.map((c) => c.pid).sort(), [...pids].sort());
    parent.stdin.write('x');
    await next('spun');
    const after = treeCpuSample(pid);
    const spent = (child: number): number =>
      (after.children.find((c) => c.pid === child)?.cpuMicros ?? 0) -
      (before.children.find((c) => c.pid === child)?.cpuMicros ?? 0);
    // 300 ms of CPU by the child's own clock, counted by the kernel in 10 ms ticks.
    assert.ok(spent(pids[0] as number) >= 250_000, `busy child: ${spent(pids[0] as number)} µs`);
    assert.ok(spent(pids[1] as number) < 100_000, `idle child: ${spent(pids[1] as number)} µs`);
    assert.ok(after.root.cpuMicros - before.root.cpuMicros < 200_000, 'the parent did not spin');
    assert.equal(cpuSample(pid).cpuMicros >= before.root.cpuMicros, true);
    const memory = treeMemorySample(pid);
    assert.equal(memory.processes, 3);
    assert.ok(memory.rssBytes > 3 * 10 * 1_048_576, 'three node processes’ RSS summed');
  } finally {
    parent.stdin.end();
    await once(parent, 'exit');
  }
});
