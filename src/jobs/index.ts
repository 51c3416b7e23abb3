export { JobRunner, JobTimedOut, type GiveUpReason, type Job, type JobContext, type JobKind, type JobResult, type RunnerLog } from './runner.js';
export { JobLost } from './lease.js';
// Queuing is a step of the caller's write, so it lives with the store (store/jobs.ts), which the store's own
// writes (feeds, webhooks) call without importing the runner.
export { cancel, enqueue, type Enqueue } from '../store/jobs.js';
export { sweepKind, type Sweep } from './recurring.js';
