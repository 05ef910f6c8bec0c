// The tickline command from the sources (through tsx), as the distributed-sweep tests run it in child processes.
import { main } from '../../../src/cli/main.ts';

process.exitCode = await main(process.argv.slice(2));
