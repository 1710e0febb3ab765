#!/usr/bin/env bash
# Sourced by the setup and test scripts: installs Bun with npm when it is missing.
if ! command -v bun >/dev/null 2>&1; then
  echo "valarmind: Bun not found; installing it with npm (npm install -g bun)" >&2
  if ! command -v npm >/dev/null 2>&1; then
    echo "valarmind: npm is not installed either; install Node.js (with npm) or Bun from https://bun.sh, then rerun" >&2
    exit 2
  fi
  npm install -g bun >/dev/null || { echo "valarmind: 'npm install -g bun' failed; install Bun from https://bun.sh and rerun" >&2; exit 1; }
  hash -r
fi
