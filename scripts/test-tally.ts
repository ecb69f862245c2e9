// A node:test reporter for scripts/test-pool.ts: the run's counts and its failed tests, as one line of JSON at
// the end (the spec reporter beside it prints the report a person reads).
import type { TestEvent } from 'node:test/reporters';

export default async function* tally(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  let counts: Record<string, number> = {};
  const failures: { name: string; file: string | undefined }[] = [];
  for await (const event of source) {
    // The root's summary: every file of the run (a summary with a file is that file's alone).
    if (event.type === 'test:summary' && event.data.file === undefined) counts = { ...event.data.counts };
    // A failed test, not a failed suite (its failed tests are named) nor a todo.
    if (event.type === 'test:fail' && !event.data.todo && event.data.details.type !== 'suite')
      failures.push({ name: event.data.name, file: event.data.file });
  }
  yield `${JSON.stringify({ counts, failures })}\n`;
}
