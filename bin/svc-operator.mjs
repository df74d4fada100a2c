#!/usr/bin/env node
// The `svc-operator` command: the operator as compiled into dist/ by the install (bin/build.mjs), from a clone or a global install.
import { runBuilt } from './built.mjs';

await runBuilt('dist/operator/src/main.js');
