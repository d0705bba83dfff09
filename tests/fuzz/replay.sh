#!/bin/sh
# Replays the fuzz corpus (tests/fuzz/corpus) through fuzz_ops built as a TAP program: every
# input must run to its end with the machine empty and consistent (see tests/fuzz/fuzz_ops.c).
# VARIANT selects the build (debug by default; asan under `make asan`).
set -eu
cd "$(dirname "$0")/../.."
exec "${BUILD:-build}/${VARIANT:-debug}/fuzz_replay" tests/fuzz/corpus/*
