import { Worker } from 'node:worker_threads';
const file = process.argv[2];
for (let r = 0; r < 3; r++) {
  const c = process.cpuUsage(); const t = performance.now();
  await new Promise((resolve, reject) => {
    const w = new Worker(file, { workerData: { config: {}, name: 'x', samples: {} } });
    w.on('message', (m) => { if (m.ready) { console.log('ready', (performance.now() - t).toFixed(0), 'ms wall', ((process.cpuUsage(c).user + process.cpuUsage(c).system) / 1000).toFixed(0), 'ms cpu'); w.terminate().then(resolve); } });
    w.on('error', reject);
  });
}
