#!/bin/sh
# Replays the two-thread fuzzer's corpus (tests/fuzz/corpus-race) through fuzz_race built as a
# TAP program: every input's racing steps must end with the machine empty and consistent.
# VARIANT selects the build (debug by default; asan under `make asan`).
set -eu
cd "$(dirname "$0")/../.."
exec "${BUILD:-build}/${VARIANT:-debug}/fuzz_race_replay" tests/fuzz/corpus-race/*
