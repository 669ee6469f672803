#!/usr/bin/env node
import { processIo } from './io';
import { main } from './main';

const code = await main(process.argv.slice(2), processIo());
process.exitCode = code;
