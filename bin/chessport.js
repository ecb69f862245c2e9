#!/usr/bin/env node
// Entry point of the `chessport` command. Node >= 22.18 runs the TypeScript sources directly.
import '../src/cli/main.ts';
