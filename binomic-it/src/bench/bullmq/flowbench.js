'use strict';
// BullMQ's flow control measured the way Binomic's `-Pbench -Dbench.only=limits` and `prio` rows are
// (binomic-it/src/main/java/io/binomic/bench): a rate limit that binds, a global concurrency limit that
// never binds against none, ten priority levels against one, and a global concurrency limit that binds.
// Starts its own redis-server on a free port; every worker is a fresh Node process (this script, forked).
//
//   node flowbench.js [runs]        (env: RATE, RATE_SECONDS, DRAIN_JOBS, CONCURRENCY, HOLD_LIMITS, HOLD_MS,
//                                    HOLD_WORKERS, RATE_WORKERS, ONLY=rate,drain,prio,hold)
// Prints one JSON line per measurement and per run, then the medians.

const { fork, spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');

const nowMicros = () => Math.round((performance.timeOrigin + performance.now()) * 1000);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const env = (name, fallback) => (process.env[name] === undefined || process.env[name] === '' ? fallback : process.env[name]);

// ---- the worker process ---------------------------------------------------------------------------
// argv: worker <port> <queue> <concurrency> <mode: noop|hold> <holdMs> <limiterMax|0> <limiterDurationMs>
// Records {s: start µs} or {h: [enter, exit]} per job; sends them to the parent when told to stop.
async function workerMain([port, queueName, concurrency, mode, holdMs, limiterMax, limiterDuration]) {
  const { Worker } = require('bullmq');
  const starts = [];
  const holds = [];
  const options = { connection: { host: '127.0.0.1', port: Number(port), maxRetriesPerRequest: null },
    concurrency: Number(concurrency), removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } };
  if (Number(limiterMax) > 0) {
    options.limiter = { max: Number(limiterMax), duration: Number(limiterDuration) };
  }
  const hold = Number(holdMs);
  const worker = new Worker(queueName, mode === 'hold'
    ? async () => { const enter = nowMicros(); await sleep(hold); holds.push(enter, nowMicros()); }
    : async () => { starts.push(nowMicros()); }, options);
  await worker.waitUntilReady();
  process.on('message', async (message) => {
    if (message === 'stop') {
      await worker.close(true);
      process.send({ starts, holds }, () => process.exit(0));
    }
  });
  process.send('ready');
}

// ---- the bench ----------------------------------------------------------------------------------
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => { const { port } = server.address(); server.close(() => resolve(port)); });
    server.on('error', reject);
  });
}

class Redis {
  static async start() {
    const port = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bullmq-bench-redis-'));
    const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
      '--dir', dir, '--maxmemory-policy', 'noeviction'], { stdio: 'ignore' });
    const redis = new Redis(port, proc);
    for (let i = 0; i < 100; i++) {
      try { if (redis.cli('PING').trim() === 'PONG') return redis; } catch (e) { /* not up yet */ }
      await sleep(100);
    }
    throw new Error('redis-server did not start on ' + port);
  }
  constructor(port, proc) { this.port = port; this.proc = proc; }
  cli(...args) { return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(this.port), ...args], { encoding: 'utf8' }); }
  info(section) {
    const out = {};
    for (const line of this.cli('INFO', section).split(/\r?\n/)) {
      const i = line.indexOf(':');
      if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
    }
    return out;
  }
  cpuSeconds() { const c = this.info('cpu'); return Number(c.used_cpu_user) + Number(c.used_cpu_sys); }
  version() { return this.info('server').redis_version; }
  flushAll() { this.cli('FLUSHALL'); }
  stop() { this.proc.kill('SIGTERM'); }
}

function startWorker(redis, queue, concurrency, mode, holdMs = 0, limiter = null) {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, ['worker', redis.port, queue, concurrency, mode, holdMs,
      limiter ? limiter.max : 0, limiter ? limiter.duration : 0], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (m) => (m === 'ready' ? resolve(child) : reject(new Error('unexpected ' + m))));
    child.once('error', reject);
  });
}

function stopWorker(child) {
  return new Promise((resolve) => {
    child.once('message', resolve);
    child.send('stop');
  });
}

async function pending(queue) {
  const c = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'paused', 'waiting-children');
  return Object.values(c).reduce((a, b) => a + b, 0);
}

async function awaitEmpty(queue, timeoutSeconds) {
  const deadline = Date.now() + timeoutSeconds * 1000;
  while (await pending(queue) > 0) {
    if (Date.now() > deadline) throw new Error('queue ' + queue.name + ' not drained after ' + timeoutSeconds + ' s');
    await sleep(20);
  }
}

async function addBacklog(queue, n, optionsOf = () => undefined) {
  const chunk = 1000;
  for (let i = 0; i < n; i += chunk) {
    const jobs = [];
    for (let j = i; j < Math.min(n, i + chunk); j++) jobs.push({ name: 'bench', data: 0, opts: optionsOf(j) });
    await queue.addBulk(jobs);
  }
}

const load1 = () => os.loadavg()[0];
let queueNumber = 0;

class Bench {
  constructor(redis) {
    this.redis = redis;
    const { Queue } = require('bullmq');
    this.Queue = Queue;
  }

  queue() {
    return new this.Queue('bench' + ++queueNumber, { connection: { host: '127.0.0.1', port: this.redis.port } });
  }

  /** A rate limit of `rate`/s over a backlog of rate × (seconds + 4): steady starts/s from 2 s after the first start. */
  async rateLimit(rate, workers, r) {
    const seconds = Number(env('RATE_SECONDS', 20));
    const prefix = `rate_${rate}_w${workers}_`;
    this.redis.flushAll();
    const queue = this.queue();
    await queue.pause();
    const children = [];
    for (let i = 0; i < workers; i++) {
      children.push(await startWorker(this.redis, queue.name, Number(env('CONCURRENCY', 1000)), 'noop', 0, { max: rate, duration: 1000 }));
    }
    r[prefix + 'load1'] = load1();
    const count = rate * (seconds + 4);
    await addBacklog(queue, count);
    await queue.resume();
    await awaitEmpty(queue, seconds + 120);
    const starts = (await Promise.all(children.map(stopWorker))).flatMap((m) => m.starts).sort((a, b) => a - b);
    await queue.close();
    const from = starts[0] + 2e6;
    const to = from + seconds * 1e6;
    const window = Math.min(seconds, (starts[starts.length - 1] - from) / 1e6);
    const inWindow = starts.filter((t) => t >= from && t < to).length;
    r[prefix + 'starts_per_s'] = inWindow / window;
    r[prefix + 'ratio_to_limit'] = inWindow / window / rate;
    r[prefix + 'window_s'] = window;
    let most = 0;
    for (let i = 0, j = 0; i < starts.length; i++) {
      while (starts[i] - starts[j] >= 1e6) j++;
      most = Math.max(most, i - j + 1);
    }
    r[prefix + 'most_in_one_second'] = most;
  }

  /** `n` no-op jobs (optionsOf: each job's options) drained by a fresh worker process: tasks/s from the first start, Redis CPU per task. */
  async drain(prefix, n, r, { globalConcurrency = 0, optionsOf } = {}) {
    this.redis.flushAll();
    const queue = this.queue();
    if (globalConcurrency > 0) await queue.setGlobalConcurrency(globalConcurrency);
    await addBacklog(queue, n, optionsOf);
    const cpu0 = this.redis.cpuSeconds();
    const child = await startWorker(this.redis, queue.name, Number(env('CONCURRENCY', 1000)), 'noop');
    await awaitEmpty(queue, 300);
    const end = nowMicros();
    const cpu1 = this.redis.cpuSeconds();
    const { starts } = await stopWorker(child);
    await queue.close();
    const first = Math.min(...starts.slice(0, 1000));
    r[prefix + 'tasks_per_s'] = n / ((end - first) / 1e6);
    r[prefix + 'drain_redis_cpu_us_per_task'] = (cpu1 - cpu0) * 1e6 / n; // includes the idle worker's start-up polls
    r[prefix + 'load1'] = load1();
  }

  /** A global concurrency limit of `limit` over jobs of `holdMs`, on `workers` processes of concurrency 2 × limit each. */
  async hold(limit, holdMs, workers, r) {
    const seconds = Number(env('RATE_SECONDS', 20));
    const prefix = `hold_${limit}_w${workers}_`;
    this.redis.flushAll();
    const queue = this.queue();
    await queue.setGlobalConcurrency(limit);
    await queue.pause();
    const children = [];
    for (let i = 0; i < workers; i++) children.push(await startWorker(this.redis, queue.name, 2 * limit, 'hold', holdMs));
    r[prefix + 'load1'] = load1();
    const ideal = limit * 1000 / holdMs;
    const count = Math.round(ideal * (seconds + 4));
    await addBacklog(queue, count);
    await queue.resume();
    await awaitEmpty(queue, seconds * 4 + 120);
    const holds = (await Promise.all(children.map(stopWorker))).flatMap((m) => m.holds);
    await queue.close();
    const events = [];
    let first = Infinity;
    for (let i = 0; i < holds.length; i += 2) {
      events.push([holds[i], 1], [holds[i + 1], -1]);
      first = Math.min(first, holds[i]);
    }
    events.sort((a, b) => (a[0] - b[0]) || (a[1] - b[1]));
    const from = first + 2e6;
    const to = from + seconds * 1e6;
    let running = 0;
    let most = 0;
    let ended = 0;
    for (const [t, d] of events) {
      running += d;
      most = Math.max(most, running);
      if (d < 0 && t >= from && t < to) ended++;
    }
    r[prefix + 'jobs'] = holds.length / 2;
    r[prefix + 'most_running'] = most;
    r[prefix + 'tasks_per_s'] = ended / seconds;
    r[prefix + 'ratio_to_ideal'] = ended / seconds / ideal;
  }

  async run(run) {
    const r = { run, load1: load1() };
    const only = env('ONLY', 'rate,drain,prio,hold').split(',');
    const n = Number(env('DRAIN_JOBS', 50000));
    const concurrency = Number(env('CONCURRENCY', 1000));
    if (only.includes('rate')) {
      for (const rate of env('RATE', '1000').split(',')) {
        for (const w of env('RATE_WORKERS', '1').split(',')) await this.rateLimit(Number(rate), Number(w), r);
      }
    }
    if (only.includes('drain')) {
      await this.drain('none_', n, r);
      await this.drain('concurrency_', n, r, { globalConcurrency: concurrency });
      r.concurrency_to_none_drain = r.concurrency_tasks_per_s / r.none_tasks_per_s;
      r.concurrency_to_none_redis_cpu = r.concurrency_drain_redis_cpu_us_per_task / r.none_drain_redis_cpu_us_per_task;
    }
    if (only.includes('prio')) {
      // BullMQ: no priority is the plain wait list; 1 (highest) to 10 are ten levels of its prioritized set
      await this.drain('prio_none_', n, r);
      await this.drain('prio_mixed_', n, r, { optionsOf: (j) => ({ priority: 1 + (j % 10) }) });
      r.prio_mixed_to_none_drain = r.prio_mixed_tasks_per_s / r.prio_none_tasks_per_s;
      r.prio_mixed_to_none_redis_cpu = r.prio_mixed_drain_redis_cpu_us_per_task / r.prio_none_drain_redis_cpu_us_per_task;
    }
    if (only.includes('hold')) {
      for (const limit of env('HOLD_LIMITS', '10,50').split(',')) {
        for (const w of env('HOLD_WORKERS', '1,4').split(',')) await this.hold(Number(limit), Number(env('HOLD_MS', 50)), Number(w), r);
      }
    }
    return r;
  }
}

function medians(results) {
  const out = {};
  for (const key of Object.keys(results[0])) {
    const values = results.map((r) => r[key]).filter((v) => typeof v === 'number').sort((a, b) => a - b);
    if (values.length) out[key] = values[Math.floor(values.length / 2)];
  }
  return out;
}

async function main() {
  const runs = Number(process.argv[2] || 3);
  const redis = await Redis.start();
  try {
    const bench = new Bench(redis);
    console.log(JSON.stringify({ machine: { nproc: os.cpus().length, node: process.version,
      bullmq: require('bullmq/package.json').version, redis: redis.version(), load1: load1() } }));
    const results = [];
    for (let run = 1; run <= runs; run++) {
      const r = await bench.run(run);
      results.push(r);
      console.log(JSON.stringify(r));
    }
    console.log(JSON.stringify({ medians: medians(results) }));
  } finally {
    redis.stop();
  }
}

if (process.argv[2] === 'worker') {
  workerMain(process.argv.slice(3)).catch((e) => { console.error(e); process.exit(1); });
} else {
  main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
}
