// Loaded into a service by a bench (node --import) to take a CPU profile of a load alone, without the
// start-up and seeding around it: SIGUSR2 starts V8's sampling profiler, the next SIGUSR2 writes the
// profile to BENCH_PROFILE_DIR (open it in Chrome's DevTools, Performance tab). bench/reads.mjs
// --profile DIR sets this up and signals around each of the service's loads.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_PROFILE_DIR;
const session = new Session();
session.connect();
let profiling = false;
let taken = 0;
process.on('SIGUSR2', () => {
  if (!profiling) {
    profiling = true;
    session.post('Profiler.enable', () => session.post('Profiler.start'));
    return;
  }
  profiling = false;
  session.post('Profiler.stop', (error, result) => {
    if (error) throw error;
    writeFileSync(join(dir, `service-${process.pid}-${++taken}.cpuprofile`), JSON.stringify(result.profile));
  });
});
