#!/usr/bin/env node
// The `svc` command: runs the TypeScript CLI through tsx (a dependency), from a clone or a global install.
import { register } from 'tsx/esm/api';

register();
await import('../server/src/cli/main.ts');
