#!/usr/bin/env node
// The `svc-operator` command: runs the TypeScript operator through tsx (a dependency), from a clone or a global install.
import { register } from 'tsx/esm/api';

register();
await import('../operator/src/main.ts');
