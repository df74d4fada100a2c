#!/usr/bin/env node
// The `svc` command: the CLI as compiled into dist/ by the install (bin/build.mjs), from a clone or a global install.
import { runBuilt } from './built.mjs';

await runBuilt('dist/server/src/cli/main.js');
